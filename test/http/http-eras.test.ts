import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectClient, type Connected, type Era } from './helpers/connect-client.js';
import { startHttp, type StartedHttp } from './helpers/start-http.js';

const ERAS: { era: Era; expected: 'legacy' | 'modern' }[] = [
  { era: 'legacy', expected: 'legacy' },
  { era: 'auto', expected: 'modern' },
];

describe.each(ERAS)('Streamable HTTP, $expected era (versionNegotiation $era)', ({ era, expected }) => {
  let srv: StartedHttp;
  let c: Connected;

  beforeAll(async () => {
    srv = await startHttp();
    c = await connectClient(srv.url, era);
  });
  afterAll(async () => {
    await c?.client.close();
    await srv?.stop();
  });

  it(`negotiates the ${expected} era`, () => {
    expect(c.client.getProtocolEra()).toBe(expected);
  });

  it('lists one tool per skill plus read_skill_file', async () => {
    const { tools } = await c.client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual(
      ['commit-message', 'csv-stats', 'markdown-report', 'markdown-toc', 'read_skill_file'].sort(),
    );
  });

  it("calls a skill tool and gets the skill's instructions", async () => {
    const result = await c.client.callTool({ name: 'markdown-toc', arguments: {} });
    expect(result.isError).not.toBe(true);
    expect(result.structuredContent).toMatchObject({ name: 'markdown-toc', kind: expect.any(String) });
    expect(JSON.stringify(result.content)).toContain('Markdown TOC and link check');
  });

  it('reads a skill file through read_skill_file', async () => {
    const result = await c.client.callTool({
      name: 'read_skill_file',
      arguments: { skill: 'commit-message', path: 'references/conventional-commits.md' },
    });
    expect(result.isError).not.toBe(true);
    expect(result.content[0]).toMatchObject({ type: 'text' });
  });

  it('lists and gets prompts', async () => {
    const { prompts } = await c.client.listPrompts();
    expect(prompts.map((p) => p.name)).toContain('csv-stats');
    const got = await c.client.getPrompt({ name: 'csv-stats', arguments: { request: 'summarise data.csv' } });
    expect(got.messages[0]?.content).toMatchObject({
      type: 'text',
      text: expect.stringContaining('Request: summarise data.csv'),
    });
  });

  it('lists and reads resources', async () => {
    const { resources } = await c.client.listResources();
    const uri = resources.find((r) => r.uri === 'skill://markdown-toc/SKILL.md')?.uri;
    expect(uri).toBeDefined();
    const read = await c.client.readResource({ uri: uri! });
    expect(read.contents[0]).toMatchObject({ uri, text: expect.stringContaining('name: markdown-toc') });
  });

  it('sends tools and prompts list_changed when a skill is added on disk, and lists the new tool', async () => {
    const toolsChanged = new Promise<void>((resolve) =>
      c.client.setNotificationHandler('notifications/tools/list_changed', () => resolve()),
    );
    const promptsChanged = new Promise<void>((resolve) =>
      c.client.setNotificationHandler('notifications/prompts/list_changed', () => resolve()),
    );
    const subscription =
      expected === 'modern'
        ? await c.client.listen({
            toolsListChanged: true,
            promptsListChanged: true,
            resourcesListChanged: true,
          })
        : undefined;
    const skill = join(srv.dir, `added-${era}`);
    mkdirSync(skill);
    writeFileSync(
      join(skill, 'SKILL.md'),
      `---\nname: added-${era}\ndescription: A skill added while the server runs.\n---\n\nDo the thing.\n`,
    );
    await Promise.all([toolsChanged, promptsChanged]);
    await subscription?.close();
    const { tools } = await c.client.listTools();
    expect(tools.map((t) => t.name)).toContain(`added-${era}`);
  });

  it('reported no client-side errors', () => {
    expect(c.errors).toEqual([]);
  });
});
