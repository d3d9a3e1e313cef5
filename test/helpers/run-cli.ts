import { spawnSync } from 'node:child_process';
import { builtCli } from './temp-dir.js';

export interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs the built binary to completion with stdin closed. */
export function runCli(
  args: string[],
  opts: { cwd?: string; env?: Record<string, string>; timeoutMs?: number } = {},
): CliRun {
  const r = spawnSync(process.execPath, [builtCli, ...args], {
    cwd: opts.cwd,
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? '/tmp', ...opts.env },
    input: '',
    encoding: 'utf8',
    timeout: opts.timeoutMs ?? 30_000,
  });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}
