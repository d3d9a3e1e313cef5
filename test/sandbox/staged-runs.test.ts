import { spawn } from 'node:child_process';
import { randomInt } from 'node:crypto';
import { chmodSync, mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/run-cli.js';
import { connectStdio } from '../helpers/stdio-client.js';
import { waitFor } from '../helpers/wait-for.js';
import { builtCli, tempDir } from '../helpers/temp-dir.js';
import {
  isLinux,
  isRoot,
  newSandbox,
  parentOf,
  pidsRunning,
  plan,
  processes,
  sleeperFixture,
  text,
} from './helpers.js';

/** The command lines of `pid`'s ancestors, nearest first. */
function ancestorsOf(pid: number): string[][] {
  const chain: string[][] = [];
  for (let p = parentOf(pid); p !== undefined && p > 1; p = parentOf(p)) {
    try {
      chain.push(readFileSync(`/proc/${p}/cmdline`, 'utf8').split('\0'));
    } catch {
      break;
    }
  }
  return chain;
}

/** Whether an ancestor of `pid` is a bwrap whose command line contains `args` in a row. */
const startedBelow = (pid: number, args: readonly string[]) =>
  ancestorsOf(pid).some(
    (argv) =>
      argv[0]?.endsWith('bwrap') === true && argv.some((_, i) => args.every((a, j) => argv[i + j] === a)),
  );

/** Whether a launcher waits inside a stager that mounted `folder` or a folder below it. */
const preStagedFor = (folder: string): boolean =>
  processes().some(
    ({ argv }) =>
      argv.includes('skills-mcp-launcher') && argv.some((a) => a === folder || a.startsWith(`${folder}/`)),
  );

const temps: (() => void)[] = [];
afterAll(() => {
  for (const cleanup of temps.splice(0)) cleanup();
});

/** A root-only folder with the skill `sleeper` (`sleeperFixture`). */
function fixture() {
  const t = tempDir('skills-mcp-killed-');
  temps.push(t.cleanup);
  chmodSync(t.dir, 0o700); // 65534 cannot pass through it
  return { dir: t.dir, args: sleeperFixture(t.dir).args };
}

/** A duration no other process on the machine uses: the test finds the script's process by its command line. */
const uniqueSeconds = () => `600.${randomInt(100_000, 999_999)}`;

/** Once the script runs, has `kill` kill its server, then waits for every process of the script to be gone. */
async function killServerMidRun(
  script: string[],
  kill: (scriptPid: number) => Promise<void>,
  stderr: () => string,
) {
  try {
    await waitFor(() => pidsRunning(script).length === 1, 20_000, 'the script running').catch(
      (err: Error) => {
        throw new Error(`${err.message}; the server said: ${stderr()}`);
      },
    );
    await kill(pidsRunning(script)[0]!);
    await waitFor(() => pidsRunning(script).length === 0, 10_000, 'the script to end with the server');
    // And it stays gone.
    await sleep(300);
    expect(pidsRunning(script)).toEqual([]);
  } finally {
    // Whatever a failing run left behind, found by the command line only this test uses.
    for (const pid of pidsRunning(script)) process.kill(pid, 'SIGKILL');
  }
}

// A root server runs scripts as uid 65534; a skill below a folder that user cannot pass through is mounted by a
// stager running as root first, and the sandbox is started from inside it: by the call (the first call of a skill),
// or by a launcher that staged the skill's folders ahead of the next call.
describe.skipIf(!isLinux || !isRoot)(
  'a root server killed with SIGKILL in the middle of a staged run',
  () => {
    it('takes a run it staged for the call with it, and the next server removes its scratch folders', async () => {
      const f = fixture();
      // Its own temp folder: another test's server sweeps a dead server's scratch folders from the shared one.
      const scratch = tempDir('skills-mcp-scratch-');
      temps.push(scratch.cleanup);
      chmodSync(scratch.dir, 0o755);
      const seconds = uniqueSeconds();
      const server = spawn(
        process.execPath,
        [builtCli, 'run', 'sleeper', '--input', JSON.stringify({ seconds }), ...f.args],
        {
          stdio: ['pipe', 'ignore', 'pipe'],
          env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: f.dir, TMPDIR: scratch.dir },
        },
      );
      let stderr = '';
      server.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
      const exited = new Promise((r) => server.once('exit', r));
      try {
        await killServerMidRun(
          ['sleep', seconds],
          async (scriptPid) => {
            // The run went through a stager started for it: a root bwrap reading its arguments from fd 6.
            expect(startedBelow(scriptPid, ['--args', '6'])).toBe(true);
            server.kill('SIGKILL');
            await exited;
          },
          () => stderr,
        );
      } finally {
        if (server.exitCode === null && server.signalCode === null) server.kill('SIGKILL');
      }
      // What it could not clean up, its scratch folders, goes with the next server's first run.
      const leftovers = () =>
        readdirSync(scratch.dir).filter((n) => n.startsWith(`skills-mcp-stage-${server.pid}-`));
      expect(leftovers()).toHaveLength(1);
      const next = runCli(['run', 'sleeper', '--input', JSON.stringify({ seconds: '0' }), ...f.args], {
        env: { HOME: f.dir, TMPDIR: scratch.dir },
      });
      expect(next.code, next.stderr).toBe(0);
      expect(leftovers()).toEqual([]);
    });

    it('takes a run on a pre-staged launcher with it', async () => {
      const f = fixture();
      const c = await connectStdio({ era: 'legacy', args: [...f.args, '--no-watch'], env: { HOME: f.dir } });
      const pid = c.transport.pid!;
      try {
        const first = await c.client.callTool({ name: 'sleeper', arguments: { seconds: '0' } });
        expect(first.isError).not.toBe(true);
        await waitFor(() => preStagedFor(f.dir), 10_000, 'a launcher that pre-staged the skill');
        const seconds = uniqueSeconds();
        const second = c.client.callTool({ name: 'sleeper', arguments: { seconds } }).catch(() => undefined);
        await killServerMidRun(
          ['sleep', seconds],
          async (scriptPid) => {
            // It runs on a launcher waiting inside a stager that mounted the skill's folders ahead of the call.
            expect(startedBelow(scriptPid, ['skills-mcp-launcher'])).toBe(true);
            expect(startedBelow(scriptPid, ['--args', '6'])).toBe(false);
            process.kill(pid, 'SIGKILL');
            await second;
          },
          c.stderr,
        );
      } finally {
        await c.close().catch(() => undefined);
      }
    });
  },
);

describe.skipIf(!isLinux || !isRoot)('a staged run, as root', () => {
  it('starts its script as any other run: stdin handed on, no signal ignored', async () => {
    const sb = newSandbox();
    try {
      const open = tempDir('skills-mcp-open-');
      const closed = tempDir('skills-mcp-closed-');
      temps.push(open.cleanup, closed.cleanup);
      chmodSync(open.dir, 0o755);
      chmodSync(closed.dir, 0o700); // 65534 cannot pass through it: staged
      const run = async (dir: string) => {
        const folder = join(dir, 'skill');
        mkdirSync(folder, { recursive: true, mode: 0o755 });
        const r = await sb.run(
          plan({
            argv: ['bash', '-c', 'grep ^SigIgn: /proc/self/status; cat'],
            readOnlyPaths: [folder],
            stdin: Buffer.from('from stdin\n'),
          }),
        );
        return { exit: r.exitCode, stdout: text(r.stdout) };
      };
      const direct = await run(open.dir);
      expect(direct.exit).toBe(0);
      expect(direct.stdout).toMatch(/^SigIgn:\s+0+\nfrom stdin\n$/);
      // Staged by the call, then on the launcher that pre-staged the folder for the next one.
      expect(await run(closed.dir)).toEqual(direct);
      expect(await run(closed.dir)).toEqual(direct);
    } finally {
      await sb.dispose();
    }
  });
});
