import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { tempDir } from '../../helpers/temp-dir.js';

export const CLI = resolve(import.meta.dirname, '../../../dist/cli.js');

export interface SpawnedServer {
  proc: ChildProcess;
  /** Everything written to stderr so far. */
  stderr(): string;
  /** Resolves with the exit code. */
  exited: Promise<number | null>;
}

/** Runs the built binary (build first: `npx tsc -p tsconfig.build.json`). */
export function spawnCli(
  args: string[],
  env: Record<string, string> = {},
  /** A command the server runs under, e.g. `['prlimit', '--nofile=256']`. */
  prefix: string[] = [],
): SpawnedServer {
  if (!existsSync(CLI)) throw new Error(`${CLI} is missing: run \`npx tsc -p tsconfig.build.json\` first`);
  const { SKILLS_MCP_TOKEN: _drop, ...inherited } = process.env;
  // Each server gets its own audit log unless the test names one (never the user's real log), removed once it exited.
  const audit = env.SKILLS_MCP_AUDIT === undefined ? tempDir('skills-mcp-audit-') : undefined;
  const [command, ...rest] = [...prefix, process.execPath, CLI, ...args] as [string, ...string[]];
  const proc = spawn(command, rest, {
    env: {
      ...inherited,
      ...(audit === undefined ? {} : { SKILLS_MCP_AUDIT: join(audit.dir, 'audit.db') }),
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let err = '';
  proc.stderr.setEncoding('utf8').on('data', (d: string) => (err += d));
  const exited = new Promise<number | null>((r) =>
    proc.once('exit', (code) => {
      audit?.cleanup();
      r(code);
    }),
  );
  return { proc, stderr: () => err, exited };
}

/** Waits for the "serving … at URL" line the binary writes to stderr once it listens. */
export async function servedUrl(s: SpawnedServer): Promise<string> {
  for (;;) {
    const m = /over Streamable HTTP at (http:\/\/\S+\/mcp)/.exec(s.stderr());
    if (m !== null) return m[1]!;
    const code = await Promise.race([s.exited, new Promise<'wait'>((r) => setTimeout(() => r('wait'), 50))]);
    if (code !== 'wait') throw new Error(`server exited (${code}) before listening:\n${s.stderr()}`);
  }
}
