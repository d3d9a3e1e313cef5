import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/client';
import { SkillsClient, type Skill } from '@modelcontextprotocol/client/ext/skills';
import { afterEach, describe, expect, it } from 'vitest';
import * as z from 'zod';
import { connectStdio, type Connected, type Era } from '../helpers/stdio-client.js';
import { waitFor } from '../helpers/wait-for.js';
import { copyBundledSkills, repoRoot, tempDir } from '../helpers/temp-dir.js';
import { connectClient } from '../http/helpers/connect-client.js';
import { servedUrl, spawnCli, type SpawnedServer } from '../http/helpers/spawn-server.js';

const fixtureRoots = ['main', 'second', 'plugin'].map((r) => join(repoRoot, 'test', 'fixtures', 'roots', r));
const BUNDLED = ['commit-message', 'csv-stats', 'markdown-report', 'markdown-toc'];
/** The corpus skills the catalog serves but the extension leaves out, each for a documented reason. */
const LEFT_OUT = [
  'Bad_Name--X',
  'compat-too-long',
  'long-description',
  'lowercase-skill-md',
  'metadata-not-strings',
];

const PageSchema = z.looseObject({
  skills: z.array(z.looseObject({ uri: z.string() })),
  nextCursor: z.string().optional(),
});

const skillMd = (name: string, description: string) =>
  `---\nname: ${name}\ndescription: ${description}\n---\n\n# ${name}\n\nDo the thing.\n`;

/** list → get → every file read back, size and digest verified by the SDK's client; returns the verified entries. */
async function verifyAll(client: Client): Promise<Skill[]> {
  const skills = new SkillsClient(client);
  expect(skills.supported).toBe(true);
  expect(skills.directoryRead).toBe(true);
  const { skills: listed } = await skills.list();
  for (const entry of listed) {
    const { skill } = await skills.get(entry.uri);
    expect(skill).toEqual(entry);
    expect(Array.isArray(skill.resources)).toBe(true);
    for (const r of skill.resources as { uri: string; size: number }[]) {
      const file = await skills.read(skill, r.uri);
      expect(file.verified).toBe(true);
      expect(file.bytes.length).toBe(r.size);
    }
  }
  return listed;
}

const rpcCode = async (p: Promise<unknown>) => {
  try {
    await p;
    return 'resolved';
  } catch (err) {
    return (err as { code?: number }).code;
  }
};

describe.each<Era>(['legacy', 'auto'])('Skills extension over stdio, %s era', (era) => {
  let c: Connected | undefined;
  let dir: { dir: string; cleanup: () => void } | undefined;
  afterEach(async () => {
    await c?.close();
    c = undefined;
    dir?.cleanup();
    dir = undefined;
  });

  it('lists, gets and serves every bundled skill file with verified sizes and digests', async () => {
    c = await connectStdio({ era, args: ['--skills', join(repoRoot, 'skills'), '--no-watch'] });
    const listed = await verifyAll(c.client);
    expect(listed.map((s) => s.uri)).toEqual(BUNDLED.map((n) => `skill://${n}/SKILL.md`));
    const skills = new SkillsClient(c.client);
    const root = await skills.readDirectory('skill://commit-message');
    expect(root.resources).toContainEqual(
      expect.objectContaining({ uri: 'skill://commit-message/references', mimeType: 'inode/directory' }),
    );
    const sub = await skills.readDirectory('skill://commit-message/references');
    expect(sub.resources.map((r) => [r.uri, r.mimeType])).toEqual([
      ['skill://commit-message/references/conventional-commits.md', 'text/markdown'],
      ['skill://commit-message/references/examples', 'inode/directory'],
    ]);
    const examples = await skills.readDirectory('skill://commit-message/references/examples');
    expect(examples.resources.map((r) => r.name)).toEqual(['dependency-update.txt', 'revert.txt']);
    expect(await rpcCode(skills.readDirectory('skill://commit-message/references/'))).toBe(-32602);
    if (era === 'auto') expect((await skills.list()).ttlMs).toBe(0);
    expect(c.errors).toEqual([]);
  });

  it('serves the fixture corpus, leaving out (with a warning) the skills the extension cannot publish', async () => {
    c = await connectStdio({ era, args: ['--no-watch', ...fixtureRoots.flatMap((r) => ['--skills', r])] });
    const listed = await verifyAll(c.client);
    const names = listed.map((s) => s.frontmatter.name);
    expect(names).toHaveLength(13);
    for (const name of LEFT_OUT) expect(names).not.toContain(name);
    // A symlink leaving the skill is not one of its files; the file it points to is never hashed or served.
    const escape = listed.find((s) => s.frontmatter.name === 'file-symlink-escape')!;
    expect((escape.resources as { uri: string }[]).map((r) => r.uri)).toEqual([
      'skill://file-symlink-escape/SKILL.md',
      'skill://file-symlink-escape/references/guide.md',
    ]);
    const skills = new SkillsClient(c.client);
    expect(await rpcCode(skills.get('skill://long-description/SKILL.md'))).toBe(-32602);
    expect(await rpcCode(skills.get('skill://nowhere/SKILL.md'))).toBe(-32602);
    expect(await rpcCode(skills.readDirectory('skill://bom-crlf/SKILL.md'))).toBe(-32602);
    expect(c.stderr()).toContain('skill left out of the skills extension');
    // Left out of the extension, still served as a resource.
    const read = await c.client.readResource({ uri: 'skill://long-description/SKILL.md' });
    expect(read.contents).toHaveLength(1);
    expect(c.errors).toEqual([]);
  });

  it('pages 130 generated skills without splitting or repeating an entry', async () => {
    dir = tempDir();
    for (let i = 0; i < 130; i++) {
      const name = `gen-skill-${String(i).padStart(3, '0')}`;
      mkdirSync(join(dir.dir, name, 'references'), { recursive: true });
      writeFileSync(
        join(dir.dir, name, 'SKILL.md'),
        skillMd(name, `Generated skill ${i}. Use it for paging.`),
      );
      writeFileSync(join(dir.dir, name, 'references', 'notes.md'), `notes ${i}\n`);
    }
    c = await connectStdio({ era, args: ['--skills', dir.dir, '--no-watch'] });
    const uris: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const page = await c.client.request(
        { method: 'skills/list', params: cursor === undefined ? {} : { cursor } },
        PageSchema,
      );
      pages++;
      uris.push(...page.skills.map((s) => s.uri));
      cursor = page.nextCursor;
    } while (cursor !== undefined);
    expect(pages).toBeGreaterThan(1);
    expect(uris).toHaveLength(130);
    expect(new Set(uris).size).toBe(130);
    expect(
      await rpcCode(c.client.request({ method: 'skills/list', params: { cursor: 'bogus' } }, PageSchema)),
    ).toBe(-32602);
    expect((await verifyAll(c.client)).length).toBe(130);
  });

  it('refuses to serve a file edited after its entry was sent, until the entry is fetched again', async () => {
    dir = copyBundledSkills();
    c = await connectStdio({ era, args: ['--skills', dir.dir, '--no-watch'] });
    const skills = new SkillsClient(c.client);
    const { skill } = await skills.get('skill://csv-stats/SKILL.md');
    const script = 'skill://csv-stats/scripts/main.py';
    await skills.read(skill, script);
    writeFileSync(join(dir.dir, 'csv-stats', 'scripts', 'main.py'), '# edited after listing\n');
    // The reader holds the old digest: the server refuses rather than serve bytes that would not match it.
    await expect(c.client.readResource({ uri: script })).rejects.toThrow(
      /changed after its skill entry was sent/,
    );
    await expect(skills.read(skill, script)).rejects.toThrow(/changed after its skill entry was sent/);
    const fresh = await skills.get('skill://csv-stats/SKILL.md');
    expect(fresh.skill).not.toEqual(skill);
    const file = await skills.read(fresh.skill, script);
    expect(file.text).toBe('# edited after listing\n');
    // SKILL.md edited with hot reload off: the catalog still holds the old frontmatter, so no entry can match both.
    writeFileSync(join(dir.dir, 'csv-stats', 'SKILL.md'), skillMd('csv-stats', 'Edited on disk.'));
    expect(await rpcCode(skills.get('skill://csv-stats/SKILL.md'))).toBe(-32602);
    expect(c.errors).toEqual([]);
  });

  it('sends resources list_changed and updates entries when a skill is added, edited and removed', async () => {
    dir = copyBundledSkills();
    let changed = 0;
    c = await connectStdio({
      era,
      args: ['--skills', dir.dir],
      listChanged: { resources: { onChanged: () => void changed++ } },
    });
    const skills = new SkillsClient(c.client);
    const uris = async () => (await skills.list()).skills.map((s) => s.uri);
    const fresh = 'skill://fresh-skill/SKILL.md';
    expect(await uris()).not.toContain(fresh);

    mkdirSync(join(dir.dir, 'fresh-skill', 'references'), { recursive: true });
    writeFileSync(join(dir.dir, 'fresh-skill', 'references', 'a.md'), 'aaaa\n');
    writeFileSync(join(dir.dir, 'fresh-skill', 'SKILL.md'), skillMd('fresh-skill', 'Added while serving.'));
    await waitFor(() => changed > 0, 15_000, 'list_changed after add');
    await expect.poll(uris, { timeout: 15_000 }).toContain(fresh);
    const added = (await skills.get(fresh)).skill;

    // A same-size edit of a file: a new digest, announced like any other change.
    const before = changed;
    writeFileSync(join(dir.dir, 'fresh-skill', 'references', 'a.md'), 'bbbb\n');
    await waitFor(() => changed > before, 15_000, 'list_changed after edit');
    const edited = (await skills.get(fresh)).skill;
    expect(edited.resources).not.toEqual(added.resources);
    expect((await skills.read(edited, 'references/a.md')).text).toBe('bbbb\n');

    const beforeRemove = changed;
    rmSync(join(dir.dir, 'fresh-skill'), { recursive: true });
    await waitFor(() => changed > beforeRemove, 15_000, 'list_changed after remove');
    await expect.poll(uris, { timeout: 15_000 }).not.toContain(fresh);
    expect(await rpcCode(skills.get(fresh))).toBe(-32602);
    expect(c.errors).toEqual([]);
  });
});

describe.each<Era>(['legacy', 'auto'])('Skills extension over Streamable HTTP, %s era', (era) => {
  let server: SpawnedServer | undefined;
  afterEach(async () => {
    server?.proc.kill('SIGTERM');
    await server?.exited;
    server = undefined;
  });

  it('lists, gets and serves every bundled skill file with verified sizes and digests', async () => {
    server = spawnCli(['--http', '--port', '0', '--skills', join(repoRoot, 'skills'), '--no-watch']);
    const c = await connectClient(await servedUrl(server), era);
    try {
      const listed = await verifyAll(c.client);
      expect(listed.map((s) => s.uri)).toEqual(BUNDLED.map((n) => `skill://${n}/SKILL.md`));
      // Tools, prompts and resources are still there.
      expect((await c.client.listTools()).tools.map((t) => t.name)).toContain('csv-stats');
      expect((await c.client.listPrompts()).prompts.map((p) => p.name)).toContain('csv-stats');
      expect(c.errors).toEqual([]);
    } finally {
      await c.client.close();
    }
  });
});
