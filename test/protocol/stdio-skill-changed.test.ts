import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { connectStdio, type Connected } from '../helpers/stdio-client.js';
import { waitFor } from '../helpers/wait-for.js';
import { copyBundledSkills } from '../helpers/temp-dir.js';
import { textOf } from '../helpers/text-of.js';

/**
 * The server keeps a digest of each SKILL.md, not its text: instructions are read when first asked for, and served
 * only while the file still holds the validated bytes. Without a watcher (`--no-watch`) a changed file is noticed
 * there, and the skills are reloaded before answering.
 */
describe('a SKILL.md that changed after start-up, without a watcher', () => {
  let skills: { dir: string; cleanup: () => void } | undefined;
  let c: Connected | undefined;
  afterEach(async () => {
    await c?.close();
    skills?.cleanup();
  });

  const start = async () => {
    skills = copyBundledSkills();
    const seen = { tools: 0 };
    c = await connectStdio({
      era: 'legacy',
      args: ['--skills', skills.dir, '--no-watch'],
      listChanged: { tools: { onChanged: () => void seen.tools++ } },
    });
    return { file: join(skills.dir, 'commit-message', 'SKILL.md'), seen, client: c.client };
  };

  it('serves the edited text after reloading, and tells the client the tools changed', async () => {
    const { file, seen, client } = await start();
    const original = readFileSync(file, 'utf8');
    writeFileSync(file, original.replace('# Commit message', '# Commit message, edited'));
    const r = await client.callTool({ name: 'commit-message', arguments: {} });
    expect(r.isError).toBeFalsy();
    expect(textOf(r)).toContain('# Commit message, edited');
    await waitFor(() => seen.tools > 0, 10_000, 'tools list_changed after the reload');
    const prompt = await client.getPrompt({ name: 'commit-message', arguments: {} });
    expect(JSON.stringify(prompt.messages)).toContain('# Commit message, edited');
  });

  it('serves the new description and text when the frontmatter changed too', async () => {
    const { file, client } = await start();
    const original = readFileSync(file, 'utf8');
    writeFileSync(file, original.replace(/^description: .*$/m, 'description: Rewritten. Use it in tests.'));
    const r = await client.callTool({ name: 'commit-message', arguments: {} });
    expect((r.structuredContent as { description: string }).description).toBe('Rewritten. Use it in tests.');
    expect((await client.listTools()).tools.find((t) => t.name === 'commit-message')?.description).toContain(
      'Rewritten. Use it in tests.',
    );
  });

  it('refuses a skill whose SKILL.md broke, and never serves the unvalidated text', async () => {
    const { file, client } = await start();
    writeFileSync(file, '---\nname: [unclosed\n---\n\nSECRET-UNVALIDATED\n');
    const r = await client.callTool({ name: 'commit-message', arguments: {} });
    expect(r.isError).toBe(true);
    expect(textOf(r)).toContain('no longer served');
    expect(JSON.stringify(r)).not.toContain('SECRET-UNVALIDATED');
    await expect(client.getPrompt({ name: 'commit-message', arguments: {} })).rejects.toThrow(
      /not found|no longer served/,
    );
    expect((await client.listTools()).tools.map((t) => t.name)).not.toContain('commit-message');
  });

  it('answers a removed skill as not found', async () => {
    const { file, client } = await start();
    rmSync(file);
    const r = await client.callTool({ name: 'commit-message', arguments: {} });
    expect(r.isError).toBe(true);
    expect(textOf(r)).toMatch(/no longer served|was removed/);
    expect(c!.errors).toEqual([]);
  });
});
