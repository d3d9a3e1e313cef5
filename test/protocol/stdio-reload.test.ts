import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { connectStdio, type Connected, type Era } from '../helpers/stdio-client.js';
import { waitFor } from '../helpers/wait-for.js';
import { copyBundledSkills } from '../helpers/temp-dir.js';

const skillMd = (name: string, description: string) =>
  `---\nname: ${name}\ndescription: ${description}\n---\n\n# ${name}\n\nDo the thing.\n`;

describe.each<Era>(['legacy', 'auto'])('hot reload over stdio, %s era', (era) => {
  let skills: { dir: string; cleanup: () => void } | undefined;
  let c: Connected | undefined;
  afterEach(async () => {
    await c?.close();
    skills?.cleanup();
  });

  it('sends list_changed for tools, prompts and resources when a skill is added, edited, broken and removed', async () => {
    skills = copyBundledSkills();
    const seen = { tools: [] as string[][], prompts: [] as string[][], resources: 0 };
    c = await connectStdio({
      era,
      args: ['--skills', skills.dir],
      listChanged: {
        tools: {
          onChanged: (_e: unknown, tools: { name: string }[] | null) =>
            seen.tools.push((tools ?? []).map((t) => t.name)),
        },
        prompts: {
          onChanged: (_e: unknown, prompts: { name: string }[] | null) =>
            seen.prompts.push((prompts ?? []).map((p) => p.name)),
        },
        resources: { onChanged: () => seen.resources++ },
      },
    });
    const names = async () => (await c!.client.listTools()).tools.map((t) => t.name);
    expect(await names()).not.toContain('fresh-skill');

    // added
    mkdirSync(join(skills.dir, 'fresh-skill'));
    writeFileSync(
      join(skills.dir, 'fresh-skill', 'SKILL.md'),
      skillMd('fresh-skill', 'A new skill. Use it to test reloads.'),
    );
    await waitFor(
      () => seen.tools.some((t) => t.includes('fresh-skill')),
      10_000,
      'tools list_changed after add',
    );
    await waitFor(
      () => seen.prompts.some((p) => p.includes('fresh-skill')),
      10_000,
      'prompts list_changed after add',
    );
    await waitFor(() => seen.resources > 0, 10_000, 'resources list_changed after add');
    const call = async () =>
      (await c!.client.callTool({ name: 'fresh-skill', arguments: {} })).structuredContent as {
        description: string;
      };
    expect((await call()).description).toBe('A new skill. Use it to test reloads.');

    // edited
    writeFileSync(join(skills.dir, 'fresh-skill', 'SKILL.md'), skillMd('fresh-skill', 'Edited description.'));
    const before = seen.tools.length;
    await waitFor(() => seen.tools.length > before, 10_000, 'tools list_changed after edit');
    const edited = (await c.client.listTools()).tools.find((t) => t.name === 'fresh-skill');
    expect(edited?.description).toContain('Edited description.');
    expect((await call()).description).toBe('Edited description.');

    // broken: the broken skill drops out, everything else keeps serving
    writeFileSync(join(skills.dir, 'fresh-skill', 'SKILL.md'), '---\nname: [unclosed\n---\n');
    await waitFor(() => seen.tools.at(-1)?.includes('fresh-skill') === false, 10_000, 'broken skill dropped');
    expect(await names()).toEqual(expect.arrayContaining(['csv-stats', 'commit-message', 'read_skill_file']));
    await waitFor(
      () => c!.stderr().includes('frontmatter-yaml'),
      10_000,
      'a warning naming the broken skill',
    );

    // removed
    writeFileSync(join(skills.dir, 'fresh-skill', 'SKILL.md'), skillMd('fresh-skill', 'Back again.'));
    await waitFor(() => seen.tools.at(-1)?.includes('fresh-skill') === true, 10_000, 'fixed skill back');
    rmSync(join(skills.dir, 'fresh-skill'), { recursive: true });
    await waitFor(() => seen.tools.at(-1)?.includes('fresh-skill') === false, 10_000, 'removed skill gone');
    expect((await c.client.listPrompts()).prompts.map((p) => p.name)).not.toContain('fresh-skill');
    expect(c.errors).toEqual([]);
  });
});
