import { once } from 'node:events';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { connectStdio } from '../helpers/stdio-client.js';
import { spawnServer } from '../helpers/server-process.js';
import { repoRoot, tempDir } from '../helpers/temp-dir.js';
import { waitFor } from '../helpers/wait-for.js';

const bundled = `${repoRoot}/skills`;
const temps: (() => void)[] = [];
afterAll(() => {
  for (const cleanup of temps.splice(0)) cleanup();
});
const auditPath = () => {
  const t = tempDir('skills-mcp-audit-');
  temps.push(t.cleanup);
  return join(t.dir, 'audit.db');
};

describe('stdio server lifecycle', () => {
  it('exits 0 when stdin closes, having written nothing to stdout', async () => {
    const child = spawnServer({
      args: ['--skills', bundled, '--no-watch', '--audit', auditPath()],
      stdin: 'pipe',
      baseEnv: 'inherit',
      ownAudit: false,
    }).proc;
    let out = '';
    child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
    child.stdin!.end();
    const [code] = (await once(child, 'close')) as [number | null];
    expect(code).toBe(0);
    expect(out).toBe('');
  });

  it.each(['SIGTERM', 'SIGINT'] as const)('closes cleanly on %s', async (signal) => {
    const server = spawnServer({
      args: ['--skills', bundled, '--audit', auditPath(), '--log-level', 'info'],
      stdin: 'pipe',
      baseEnv: 'inherit',
      ownAudit: false,
    });
    const child = server.proc;
    await waitFor(() => server.stderr().includes('"msg":"ready"'), 10_000, 'the ready line');
    child.kill(signal);
    const [code] = (await once(child, 'close')) as [number | null];
    expect(code).toBe(0);
    expect(server.stderr()).toContain('"msg":"stopped"');
  });

  it('serves list_skills and load_skill instead of per-skill tools in compact mode', async () => {
    const c = await connectStdio({
      era: 'legacy',
      args: ['--skills', bundled, '--tools', 'compact', '--no-watch'],
    });
    try {
      const names = (await c.client.listTools()).tools.map((t) => t.name).sort();
      expect(names).toEqual(['list_skills', 'load_skill', 'read_skill_file', 'run_skill_script']);
      const list = await c.client.callTool({ name: 'list_skills', arguments: {} });
      expect(JSON.stringify(list.structuredContent)).toContain('csv-stats');
      const loaded = await c.client.callTool({ name: 'load_skill', arguments: { skill: 'markdown-toc' } });
      expect(loaded.structuredContent).toMatchObject({ name: 'markdown-toc' });
      expect(c.client.getInstructions()).toContain('list_skills');
    } finally {
      await c.close();
    }
  });
});
