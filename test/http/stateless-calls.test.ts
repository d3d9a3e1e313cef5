import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectClient, type Connected } from './helpers/connect-client.js';
import { REPO_SKILLS } from './helpers/start-http.js';
import { servedUrl, spawnCli, type SpawnedServer } from './helpers/spawn-server.js';

/** Calls each era makes alike; a stateless (2026-07-28) request builds an instance with the called tool only. */
const CALLS = [
  { name: 'markdown-toc', arguments: {} },
  { name: 'read_skill_file', arguments: { skill: 'commit-message', path: 'SKILL.md' } },
  { name: 'read_skill_file', arguments: { skill: 'commit-message', path: '../outside.md' } },
  { name: 'csv-stats', arguments: { csv: 42 } },
  { name: 'no_such_tool', arguments: {} },
];

const outcome = async (c: Connected, call: (typeof CALLS)[number]) => {
  try {
    const r = await c.client.callTool(call);
    return { content: r.content, structuredContent: r.structuredContent, isError: r.isError === true };
  } catch (err) {
    return { thrown: (err as Error).message };
  }
};

describe('a stateless HTTP request (2026-07-28) served by the built binary', () => {
  let server: SpawnedServer;
  let legacy: Connected;
  let modern: Connected;

  beforeAll(async () => {
    server = spawnCli([
      '--http',
      '--port',
      '0',
      '--skills',
      REPO_SKILLS,
      '--no-watch',
      '--log-level',
      'warn',
    ]);
    const url = await servedUrl(server);
    legacy = await connectClient(url, 'legacy');
    modern = await connectClient(url, 'auto');
  });
  afterAll(async () => {
    await legacy?.client.close();
    await modern?.client.close();
    server?.proc.kill('SIGTERM');
    await server?.exited;
  });

  it.each(CALLS)('answers a call of $name exactly as a session does', async (call) => {
    expect(modern.client.getProtocolEra()).toBe('modern');
    expect(await outcome(modern, call)).toEqual(await outcome(legacy, call));
  });

  it('still lists every tool', async () => {
    const names = async (c: Connected) => (await c.client.listTools()).tools.map((t) => t.name).sort();
    expect(await names(modern)).toEqual(await names(legacy));
    expect(await names(modern)).toContain('run_skill_script');
  });
});
