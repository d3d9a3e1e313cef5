/** A local user racing the server's host-side work: `probes/swapper.py`, started as an ordinary user. */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const SWAPPER = fileURLToPath(new URL('../probes/swapper.py', import.meta.url));
/** The system's python (a pyenv shim in /root is not for uid 65534). */
const PYTHON = existsSync('/usr/bin/python3') ? '/usr/bin/python3' : 'python3';
const SETPRIV = ['/usr/bin/setpriv', '/bin/setpriv'].find((p) => existsSync(p)) ?? 'setpriv';

/** The ordinary user the swapper runs as: nobody when the test is root, else the test's own user. */
export const SWAPPER_ID =
  process.getuid?.() === 0
    ? { uid: 65534, gid: 65534 }
    : { uid: process.getuid?.() ?? -1, gid: process.getgid?.() ?? -1 };

export interface Swapper {
  pid: number;
  /** Still swapping (it has not stopped itself or been stopped). */
  running(): boolean;
  /** Stops it (SIGKILL by pid) and waits for its exit; the number of rounds it reported, when it did. */
  stop(): Promise<void>;
}

/**
 * Starts swapping each pair of paths with RENAME_EXCHANGE in a loop; resolves once it is looping. It stops itself
 * after `seconds` (longer than any case runs); `stop()` kills it by pid.
 */
export async function startSwapper(pairs: Array<[string, string]>, seconds = 900): Promise<Swapper> {
  const args = [PYTHON, SWAPPER, String(seconds), '100000000', ...pairs.flat()];
  const child: ChildProcess =
    process.getuid?.() === 0
      ? spawn(
          SETPRIV,
          ['--reuid=65534', '--regid=65534', '--clear-groups', '--inh-caps=-all', '--', ...args],
          { stdio: ['ignore', 'pipe', 'inherit'], env: { PATH: '/usr/bin:/bin' } },
        )
      : spawn(args[0]!, args.slice(1), {
          stdio: ['ignore', 'pipe', 'inherit'],
          env: { PATH: '/usr/bin:/bin' },
        });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  await new Promise<void>((resolve, reject) => {
    let seen = '';
    child.stdout?.on('data', (d: Buffer) => {
      seen += d.toString();
      if (seen.includes('ready\n')) resolve();
    });
    child.once('error', reject);
    void exited.then(() => reject(new Error(`swapper exited before it started: ${seen}`)));
  });
  const pid = child.pid!;
  return {
    pid,
    running: () => child.exitCode === null && child.signalCode === null,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) process.kill(pid, 'SIGKILL');
      await exited;
    },
  };
}
