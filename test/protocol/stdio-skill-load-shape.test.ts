import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import matter from 'gray-matter';
import { connectStdio, type Connected } from '../helpers/stdio-client.js';
import { repoRoot } from '../helpers/temp-dir.js';

const bundled = `${repoRoot}/skills`;
const bodyOf = (skill: string) => matter(readFileSync(`${bundled}/${skill}/SKILL.md`, 'utf8')).content.trim();
type Text = { type: string; text: string };

describe('the answer to a skill load', () => {
  let perSkill: Connected;
  let compact: Connected;
  beforeAll(async () => {
    [perSkill, compact] = await Promise.all([
      connectStdio({ era: 'legacy', args: ['--skills', bundled, '--no-watch'] }),
      connectStdio({ era: 'legacy', args: ['--skills', bundled, '--tools', 'compact', '--no-watch'] }),
    ]);
  });
  afterAll(async () => {
    await Promise.all([perSkill?.close(), compact?.close()]);
  });

  it('hands the model the SKILL.md body once, then one index line per file', async () => {
    const r = await compact.client.callTool({ name: 'load_skill', arguments: { skill: 'markdown-toc' } });
    const blocks = r.content as Text[];
    expect(blocks).toHaveLength(1);
    const body = bodyOf('markdown-toc');
    const text = blocks[0]!.text;
    expect(text.startsWith(body)).toBe(true);
    expect(text.indexOf(body, 1)).toBe(-1);
    const index = text.slice(body.length);
    const files = (r.structuredContent as { files: { path: string }[] }).files;
    for (const f of files) expect(index).toContain(`- ${f.path} (`);
    // The index is a line per file and two lines of how to read and run them, nothing more.
    expect(index.length).toBeLessThan(400 + 60 * files.length);
  });

  it('gives programs the metadata and file URIs, with no second copy of the instructions', async () => {
    const r = await compact.client.callTool({ name: 'load_skill', arguments: { skill: 'markdown-toc' } });
    const view = r.structuredContent as Record<string, unknown> & { files: { path: string; uri: string }[] };
    expect(Object.keys(view).sort()).toEqual(['description', 'files', 'kind', 'name']);
    expect(view).toMatchObject({ name: 'markdown-toc', kind: 'instruction' });
    expect(view.files).toContainEqual({
      path: 'SKILL.md',
      size: expect.any(Number) as number,
      uri: 'skill://markdown-toc/SKILL.md',
    });
    expect(JSON.stringify(view)).not.toContain(bodyOf('markdown-toc').slice(0, 80));
    const read = await compact.client.readResource({ uri: 'skill://markdown-toc/SKILL.md' });
    expect((read.contents[0] as { text: string }).text).toContain(bodyOf('markdown-toc').slice(0, 80));
  });

  it('is the same from a per-skill tool as from load_skill, and the tool lists no output schema', async () => {
    const [fromTool, fromLoad] = await Promise.all([
      perSkill.client.callTool({ name: 'commit-message', arguments: {} }),
      compact.client.callTool({ name: 'load_skill', arguments: { skill: 'commit-message' } }),
    ]);
    expect(fromTool.structuredContent).toEqual(fromLoad.structuredContent);
    expect((fromTool.content as Text[])[0]!.text.startsWith(bodyOf('commit-message'))).toBe(true);
    const { tools } = await perSkill.client.listTools();
    const skillTools = tools.filter((t) => t.title?.startsWith('Skill: '));
    expect(skillTools.length).toBeGreaterThan(0);
    for (const t of skillTools) expect(t.outputSchema).toBeUndefined();
  });
});
