import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { servedUrl, spawnCli } from '../http/helpers/spawn-server.js';
import { startRawServer } from '../helpers/raw-stdio.js';
import { repoRoot, tempDir } from '../helpers/temp-dir.js';

const bundled = join(repoRoot, 'skills');
const WARN = 40;

/** Every stderr line of a stdio session that listed tools and called a read-only one, read once the server exited. */
async function session(args: string[], env: Record<string, string> = {}) {
  const s = await startRawServer('legacy', ['--skills', bundled, '--no-watch', ...args], env);
  expect((await s.request(1, 'tools/list')).result?.tools).toBeDefined();
  expect((await s.request(2, 'tools/call', { name: 'markdown-toc', arguments: {} })).error).toBeUndefined();
  expect(await s.end()).toBe(0);
  return s
    .stderr()
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as { level: number; msg: string; count?: number });
}

describe('log level over stdio, where hosts show stderr to their users', () => {
  const t = tempDir();
  afterAll(t.cleanup);

  it('writes only warnings and errors to stderr unless asked', async () => {
    const lines = await session([]);
    expect(lines.filter((l) => l.level < WARN).map((l) => l.msg)).toEqual([]);
  });

  it('writes the start-up and stop lines with --log-level info, log_level: info or SKILLS_MCP_LOG_LEVEL=info', async () => {
    const file = join(t.dir, 'skills-mcp.yaml');
    writeFileSync(file, 'log_level: info\n');
    for (const lines of [
      await session(['--log-level', 'info']),
      await session(['--config', file]),
      await session([], { SKILLS_MCP_LOG_LEVEL: 'info' }),
    ]) {
      expect(lines).toContainEqual(expect.objectContaining({ msg: 'skills loaded', count: 4 }));
      expect(lines.map((l) => l.msg)).toContain('stopped');
    }
  });

  it('keeps the info lines over HTTP, where the operator reads the log', async () => {
    const s = spawnCli(['--http', '--port', '0', '--skills', bundled, '--no-watch']);
    try {
      await servedUrl(s);
      expect(s.stderr()).toContain('"msg":"skills loaded"');
    } finally {
      s.proc.kill('SIGTERM');
      await s.exited;
    }
  });
});
