import { describe, expect, it } from 'vitest';
import { startServer } from './server-under-test.js';
import { repoRoot } from './temp-dir.js';

const skills = [`${repoRoot}/skills`];
const config = 'tools: compact\n';
const COMPACT = ['list_skills', 'load_skill', 'read_skill_file', 'run_skill_script'];
const names = (tools: unknown) => (tools as { name: string }[]).map((t) => t.name).sort();

describe('startServer: the built binary under test, started one way over each transport', () => {
  it('serves the skills and the config text it is given over stdio with the SDK client', async () => {
    const c = await startServer({ transport: 'stdio', era: 'auto', skills, config, args: ['--no-watch'] });
    try {
      expect(names((await c.client.listTools()).tools)).toEqual(COMPACT);
      expect(c.errors).toEqual([]);
    } finally {
      await c.close();
    }
  });

  it.each(['legacy', 'modern'] as const)(
    'serves the skills and the config text it is given to a raw %s client',
    async (era) => {
      const s = await startServer({
        transport: 'stdio',
        client: 'raw',
        era,
        skills,
        config,
        args: ['--no-watch'],
      });
      expect(names((await s.request(1, 'tools/list')).result?.tools)).toEqual(COMPACT);
      expect(await s.end()).toBe(0);
    },
  );

  it('serves the skills and the config text it is given over HTTP, with a client once it listens', async () => {
    const s = await startServer({ transport: 'http', era: 'legacy', skills, config, args: ['--no-watch'] });
    expect(s.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/mcp$/);
    expect(names((await s.client!.listTools()).tools)).toEqual(COMPACT);
    expect(await s.close()).toBe(0);
  });

  it('fails with what the server said when it exits before listening over HTTP', async () => {
    await expect(startServer({ transport: 'http', args: ['--no-such-option'] })).rejects.toThrow(
      /server exited \(2\) before listening:[\s\S]*no-such-option/,
    );
  });
});
