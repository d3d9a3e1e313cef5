import { spawn, type ChildProcess, type StdioPipe } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { builtCli, tempDir } from './temp-dir.js';

export interface ServerProcess {
  proc: ChildProcess;
  pid: number;
  /** Everything written to stderr so far. */
  stderr: () => string;
  /** Resolves with the exit code (null when a signal ended it), once the process exited and its audit folder is gone. */
  exited: Promise<number | null>;
  /** Sends `signal` to this pid unless it exited already, and resolves with the exit code. */
  stop: (signal?: NodeJS.Signals) => Promise<number | null>;
}

export interface SpawnServerOptions {
  args: string[];
  env?: Record<string, string>;
  /**
   * `minimal` (PATH and HOME only, as a client launching the server gives it) unless `inherit`: this process's
   * environment less `SKILLS_MCP_TOKEN`.
   */
  baseEnv?: 'minimal' | 'inherit';
  /** A command the server runs under, e.g. `['prlimit', '--nofile=256']`. */
  prefix?: string[];
  /** `ignore` (HTTP) unless `pipe` (stdio: the test writes the protocol). */
  stdin?: 'ignore' | 'pipe';
  /** `false`: no audit log of its own, for a server whose config or flags name one. */
  ownAudit?: boolean;
}

/**
 * The server's environment: `base` and `env`, plus an audit log of its own in a fresh temp folder unless `env` names
 * one or `ownAudit` is false (never the user's real log). `cleanup` removes that folder; call it once the server exited.
 */
export function serverEnv(
  base: Record<string, string | undefined>,
  env: Record<string, string> = {},
  ownAudit = true,
): { env: Record<string, string>; cleanup: () => void } {
  const audit = ownAudit && env.SKILLS_MCP_AUDIT === undefined ? tempDir('skills-mcp-audit-') : undefined;
  const merged: Record<string, string> = {};
  for (const [k, v] of Object.entries(base)) if (v !== undefined) merged[k] = v;
  return {
    env: {
      ...merged,
      ...(audit === undefined ? {} : { SKILLS_MCP_AUDIT: join(audit.dir, 'audit.db') }),
      ...env,
    },
    cleanup: () => audit?.cleanup(),
  };
}

/** PATH and HOME from this process: what a client launching the server passes on. */
export const minimalEnv = (): Record<string, string> => ({
  PATH: process.env.PATH ?? '/usr/bin:/bin',
  HOME: process.env.HOME ?? '/tmp',
});

const leftRunning = new Set<() => void>();
let endHookInstalled = false;

/**
 * Registers `kill` (SIGKILL by pid, a no-op once the process exited) to run when this test file's run ends: vitest
 * ends a test worker with SIGTERM, which this catches (then lets it end the worker), or the worker exits. A server a
 * test forgot to close never outlives its file; one started in a test may still serve the file's later tests. The
 * returned function unregisters it (call it on close).
 */
export function killAtFileEnd(kill: () => void): () => void {
  leftRunning.add(kill);
  if (!endHookInstalled) {
    endHookInstalled = true;
    const killAll = () => {
      for (const k of leftRunning) k();
      leftRunning.clear();
    };
    process.once('exit', killAll);
    process.once('SIGTERM', () => {
      killAll();
      process.kill(process.pid, 'SIGTERM');
    });
  }
  return () => void leftRunning.delete(kill);
}

/** Spawns the built binary (`npm run build` first) with stderr captured; it is killed by pid at the latest when the test file's run ends. */
export function spawnServer(o: SpawnServerOptions): ServerProcess {
  if (!existsSync(builtCli)) throw new Error(`${builtCli} is missing: run \`npm run build\` first`);
  const { SKILLS_MCP_TOKEN: _drop, ...inherited } = process.env;
  const { env, cleanup } = serverEnv(o.baseEnv === 'inherit' ? inherited : minimalEnv(), o.env, o.ownAudit);
  const [command, ...rest] = [...(o.prefix ?? []), process.execPath, builtCli, ...o.args] as [
    string,
    ...string[],
  ];
  const stdio: [StdioPipe | 'ignore', StdioPipe, StdioPipe] = [o.stdin ?? 'ignore', 'pipe', 'pipe'];
  const proc = spawn(command, rest, { env, stdio });
  let err = '';
  proc.stderr!.setEncoding('utf8').on('data', (d: string) => (err += d));
  const running = () => proc.exitCode === null && proc.signalCode === null;
  const kill = () => void (running() && proc.kill('SIGKILL'));
  let unregister: () => void = () => undefined;
  const exited = new Promise<number | null>((r) =>
    proc.once('exit', (code) => {
      unregister();
      cleanup();
      r(code);
    }),
  );
  const stop = async (signal: NodeJS.Signals = 'SIGTERM') => {
    if (running()) proc.kill(signal);
    return exited;
  };
  unregister = killAtFileEnd(kill);
  return { proc, pid: proc.pid!, stderr: () => err, exited, stop };
}
