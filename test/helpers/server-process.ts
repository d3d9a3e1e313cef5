import { spawn, type ChildProcess, type StdioPipe } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { onTestFinished } from 'vitest';
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
}

/**
 * The server's environment: `base` and `env`, plus an audit log of its own in a fresh temp folder unless `env` names
 * one (never the user's real log). `cleanup` removes that folder; call it once the server exited.
 */
export function serverEnv(
  base: Record<string, string | undefined>,
  env: Record<string, string> = {},
): { env: Record<string, string>; cleanup: () => void } {
  const audit = env.SKILLS_MCP_AUDIT === undefined ? tempDir('skills-mcp-audit-') : undefined;
  const merged: Record<string, string> = {};
  for (const [k, v] of Object.entries(base)) if (v !== undefined) merged[k] = v;
  return {
    env: { ...merged, ...(audit === undefined ? {} : { SKILLS_MCP_AUDIT: join(audit.dir, 'audit.db') }), ...env },
    cleanup: () => audit?.cleanup(),
  };
}

/** PATH and HOME from this process: what a client launching the server passes on. */
export const minimalEnv = (): Record<string, string> => ({
  PATH: process.env.PATH ?? '/usr/bin:/bin',
  HOME: process.env.HOME ?? '/tmp',
});

const leftRunning = new Set<() => void>();
let exitHookInstalled = false;

/**
 * Ends the server when the test that started it ends (it was started inside a test), or else when this test worker
 * exits (it was started in a hook): a test that forgets to close one never leaves a server running. `kill` must be
 * a no-op once the process has exited; the returned function unregisters it.
 */
export function stopAtTestEnd(stop: () => Promise<unknown>, kill: () => void): () => void {
  try {
    onTestFinished(async () => void (await stop()));
  } catch {
    // Not inside a test (a beforeAll/beforeEach hook): the hook's own teardown closes it; this is the safety net.
  }
  leftRunning.add(kill);
  if (!exitHookInstalled) {
    exitHookInstalled = true;
    process.once('exit', () => {
      for (const k of leftRunning) k();
    });
  }
  return () => void leftRunning.delete(kill);
}

/** Spawns the built binary (`npm run build` first) with stderr captured; it is stopped by pid at the latest when the test ends. */
export function spawnServer(o: SpawnServerOptions): ServerProcess {
  if (!existsSync(builtCli)) throw new Error(`${builtCli} is missing: run \`npm run build\` first`);
  const { SKILLS_MCP_TOKEN: _drop, ...inherited } = process.env;
  const { env, cleanup } = serverEnv(o.baseEnv === 'inherit' ? inherited : minimalEnv(), o.env);
  const [command, ...rest] = [...(o.prefix ?? []), process.execPath, builtCli, ...o.args] as [string, ...string[]];
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
  // At the test's end: SIGTERM, and SIGKILL if it is still there 5 s later (a bound, not a wait for something).
  const stopAtEnd = async () => {
    if (!running()) return;
    proc.kill('SIGTERM');
    await Promise.race([exited, new Promise((r) => setTimeout(r, 5_000).unref())]);
    kill();
    await exited;
  };
  unregister = stopAtTestEnd(stopAtEnd, kill);
  return { proc, pid: proc.pid!, stderr: () => err, exited, stop };
}
