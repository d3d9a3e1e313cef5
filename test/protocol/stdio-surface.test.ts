import { symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectStdio, type Connected, type Era } from '../helpers/stdio-client.js';
import { copyBundledSkills, tempDir } from '../helpers/temp-dir.js';

type Text = { type: 'text'; text: string };

describe.each<Era>(['legacy', 'auto'])('stdio server, %s era', (era) => {
  let skills: { dir: string; cleanup: () => void };
  let outside: { dir: string; cleanup: () => void };
  let c: Connected;

  beforeAll(async () => {
    skills = copyBundledSkills();
    outside = tempDir();
    writeFileSync(join(outside.dir, 'secret.txt'), 'CANARY-SECRET');
    symlinkSync(join(outside.dir, 'secret.txt'), join(skills.dir, 'commit-message', 'leak.txt'));
    c = await connectStdio({ era, args: ['--skills', skills.dir, '--no-watch'] });
  });
  afterAll(async () => {
    await c.close();
    skills.cleanup();
    outside.cleanup();
  });

  it('lists one tool per bundled skill plus read_skill_file and run_skill_script, with truthful annotations', async () => {
    const { tools } = await c.client.listTools();
    const byName = new Map(tools.map((t) => [t.name, t]));
    expect([...byName.keys()].sort()).toEqual(
      [
        'commit-message',
        'csv-stats',
        'markdown-report',
        'markdown-toc',
        'read_skill_file',
        'run_skill_script',
      ].sort(),
    );
    for (const t of tools) {
      expect(t.name).toMatch(/^[a-zA-Z0-9_-]{1,40}$/);
      // MCP's default dialect, never repeated per tool.
      expect(t.inputSchema).not.toHaveProperty('$schema');
    }
    for (const ro of ['commit-message', 'markdown-toc', 'read_skill_file']) {
      expect(byName.get(ro)!.annotations?.readOnlyHint).toBe(true);
    }
    for (const rw of ['csv-stats', 'markdown-report', 'run_skill_script']) {
      expect(byName.get(rw)!.annotations?.readOnlyHint).toBe(false);
    }
    expect(byName.get('csv-stats')!.inputSchema).toMatchObject({
      type: 'object',
      properties: { csv: { type: 'string' } },
    });
  });

  it("returns an instruction skill's instructions and a compact file index, with file URIs for programs", async () => {
    const r = await c.client.callTool({ name: 'markdown-toc', arguments: {} });
    expect(r.isError).toBeFalsy();
    const blocks = r.content as Text[];
    expect(blocks.map((b) => b.type)).toEqual(['text']);
    const text = blocks[0]!.text;
    expect(text).toContain('# Markdown TOC');
    expect(text).toContain('- scripts/toc.py (');
    expect(text).toContain('run_skill_script');
    const view = r.structuredContent as { files: { path: string; uri: string }[] };
    expect(r.structuredContent).toMatchObject({ name: 'markdown-toc', kind: 'instruction' });
    expect(Object.keys(r.structuredContent!)).not.toContain('instructions');
    expect(view.files.map((f) => f.uri)).toContain('skill://markdown-toc/SKILL.md');
  });

  it('reads a file of a skill with read_skill_file', async () => {
    const r = await c.client.callTool({
      name: 'read_skill_file',
      arguments: { skill: 'csv-stats', path: 'SKILL.md' },
    });
    expect(r.isError).toBeFalsy();
    expect((r.content as Text[])[0]!.text).toMatch(/^---\nname: csv-stats/);
  });

  it.each([
    ['../commit-message/SKILL.md', /leaves the skill folder/],
    ['/etc/passwd', /absolute paths are refused/],
    ['leak.txt', /leaves the skill folder/],
    ['references/nope.md', /has no file "references\/nope.md"/],
  ])('refuses read_skill_file path %s with an actionable error', async (path, message) => {
    const r = await c.client.callTool({
      name: 'read_skill_file',
      arguments: { skill: 'commit-message', path },
    });
    expect(r.isError).toBe(true);
    const text = (r.content as Text[])[0]!.text;
    expect(text).toMatch(message);
    expect(text).toContain('Hint:');
    expect(text).not.toContain('CANARY-SECRET');
  });

  it('answers an unknown skill with the names it knows', async () => {
    const r = await c.client.callTool({
      name: 'read_skill_file',
      arguments: { skill: 'csv', path: 'SKILL.md' },
    });
    expect(r.isError).toBe(true);
    expect((r.content as Text[])[0]!.text).toMatch(/no skill named "csv"[\s\S]*csv-stats/);
  });

  it('answers a bad tool argument with an isError result', async () => {
    const r = await c.client.callTool({ name: 'read_skill_file', arguments: { skill: 'csv-stats' } });
    expect(r.isError).toBe(true);
  });

  it('lists one prompt per skill and renders it with the request', async () => {
    const { prompts } = await c.client.listPrompts();
    expect(prompts.map((p) => p.name)).toEqual(expect.arrayContaining(['commit-message', 'csv-stats']));
    const g = await c.client.getPrompt({
      name: 'commit-message',
      arguments: { request: 'fix the login bug' },
    });
    const text = (g.messages[0]!.content as Text).text;
    expect(text).toContain('Use the "commit-message" skill');
    expect(text).toContain('Request: fix the login bug');
  });

  it('describes each prompt with its optional request argument', async () => {
    const { prompts } = await c.client.listPrompts();
    expect(prompts.find((p) => p.name === 'csv-stats')).toEqual({
      name: 'csv-stats',
      title: 'csv-stats',
      description: expect.stringContaining('CSV'),
      arguments: [
        { name: 'request', description: 'What you want done with this skill (optional).', required: false },
      ],
    });
  });

  it('refuses an unknown prompt and a bad prompt argument with invalid params', async () => {
    await expect(c.client.getPrompt({ name: 'no-such-skill' })).rejects.toMatchObject({
      code: -32602,
      message: expect.stringContaining('Prompt no-such-skill not found'),
    });
    await expect(
      c.client.getPrompt({ name: 'csv-stats', arguments: { request: 'x'.repeat(100_001) } }),
    ).rejects.toMatchObject({
      code: -32602,
      message: expect.stringContaining('Invalid arguments for prompt csv-stats: request: Too big'),
    });
    const g = await c.client.getPrompt({ name: 'csv-stats' });
    expect((g.messages[0]!.content as Text).text).not.toContain('Request:');
  });

  it('lists every skill file as a skill:// resource, SKILL.md first, and reads it', async () => {
    const { resources } = await c.client.listResources();
    const ofCsv = resources.filter((r) => r.uri.startsWith('skill://csv-stats/'));
    expect(ofCsv[0]!.uri).toBe('skill://csv-stats/SKILL.md');
    expect(resources.some((r) => r.uri.includes('leak.txt'))).toBe(false);
    const read = await c.client.readResource({ uri: 'skill://csv-stats/SKILL.md' });
    expect((read.contents[0] as { text: string }).text).toContain('name: csv-stats');
    const { resourceTemplates } = await c.client.listResourceTemplates();
    expect(resourceTemplates.map((t) => t.uriTemplate)).toContain('skill://{skill}/{+path}');
  });

  it('titles every other skill file by its skill and path, and says what the file is', async () => {
    const { resources } = await c.client.listResources();
    const byUri = new Map(resources.map((r) => [r.uri, r]));
    expect(byUri.get('skill://csv-stats/SKILL.md')).toMatchObject({ title: 'csv-stats: instructions' });
    expect(byUri.get('skill://csv-stats/scripts/main.py')).toMatchObject({
      title: 'csv-stats: scripts/main.py',
      description:
        'Python script, 12.5 KB, part of the csv-stats skill (its entry point, run through the csv-stats tool).',
    });
    expect(byUri.get('skill://csv-stats/assets/example-input.json')).toMatchObject({
      title: 'csv-stats: assets/example-input.json',
      description: 'JSON asset, 315 bytes, part of the csv-stats skill.',
    });
    expect(byUri.get('skill://commit-message/references/conventional-commits.md')).toMatchObject({
      title: 'commit-message: references/conventional-commits.md',
      description: expect.stringMatching(
        /^Markdown reference, [\d.]+ KB, part of the commit-message skill\.$/,
      ),
    });
    const titles = resources.filter((r) => r.uri.startsWith('skill://')).map((r) => r.title);
    expect(new Set(titles).size).toBe(titles.length);
  });

  it.each([
    'skill://csv-stats/..%2FSKILL.md',
    'skill://commit-message/leak.txt',
    'skill://csv-stats/missing.md',
    'skill://nope/SKILL.md',
  ])('refuses resources/read of %s', async (uri) => {
    await expect(c.client.readResource({ uri })).rejects.toThrow();
  });

  it('puts a skill index in the server instructions', () => {
    expect(c.client.getInstructions()).toMatch(/- csv-stats: /);
  });

  it('wrote nothing but protocol to stdout, and no info lines to stderr (only warnings and errors by default)', () => {
    expect(c.errors).toEqual([]);
    expect(c.stderr()).not.toMatch(/"level":[1-3]\d,/);
  });
});
