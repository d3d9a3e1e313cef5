import { appendFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { SETTLE_MS } from '../../src/skills/folder-load.js';
import { connectStdio, type Connected } from '../helpers/stdio-client.js';
import { waitFor } from '../helpers/wait-for.js';
import { copyBundledSkills, repoRoot, tempDir } from '../helpers/temp-dir.js';

/** The newest status-change time of anything under `dir`. */
function newestChange(dir: string): number {
  let newest = statSync(dir).ctimeMs;
  for (const e of readdirSync(dir, { withFileTypes: true, recursive: true })) {
    newest = Math.max(newest, statSync(join(e.parentPath, e.name)).ctimeMs);
  }
  return newest;
}

describe('a second start over the same state folder', () => {
  let c: Connected | undefined;
  const temps: (() => void)[] = [];
  afterEach(async () => {
    await c?.close();
    for (const cleanup of temps.splice(0)) cleanup();
  });
  const stateFolder = () => {
    const t = tempDir('skills-mcp-state-');
    temps.push(t.cleanup);
    return t.dir;
  };

  it('takes the unchanged skill folders from the catalog cache and serves the same', async () => {
    // The package's own skills, read only. A folder changed moments ago is never cached: wait until it would be.
    const skills = join(repoRoot, 'skills');
    await waitFor(
      () => Date.now() > newestChange(skills) + SETTLE_MS + 100,
      SETTLE_MS + 5_000,
      'settled files',
    );
    const state = stateFolder();
    const serve = async () => {
      c = await connectStdio({
        era: 'legacy',
        args: ['--skills', skills, '--no-watch', '--log-level', 'info'],
        env: { SKILLS_MCP_AUDIT: join(state, 'audit.db') },
      });
      const tools = (await c.client.listTools()).tools.map((t) => t.name);
      const call = await c.client.callTool({ name: 'commit-message', arguments: {} });
      const stderr = c.stderr();
      await c.close();
      c = undefined;
      return { tools, call, stderr };
    };
    const first = await serve();
    expect(first.stderr).toContain('"cached":0');
    const folder = join(state, 'catalog-cache');
    const files = readdirSync(folder);
    expect(files).toHaveLength(1);
    expect(statSync(join(folder, files[0]!)).mode & 0o777).toBe(0o600);

    const second = await serve();
    expect(second.stderr).toContain('"cached":4');
    expect(second.tools).toEqual(first.tools);
    expect(second.call).toEqual(first.call);
  });

  it.each([
    ['without watching', ['--no-watch']],
    ['watching', []],
  ])(
    'serves the files a skill holds now when only files beside its SKILL.md changed since the cache, %s',
    async (_, flags) => {
      const skills = copyBundledSkills();
      try {
        await waitFor(
          () => Date.now() > newestChange(skills.dir) + SETTLE_MS + 100,
          SETTLE_MS + 5_000,
          'settled files',
        );
        const state = stateFolder();
        const serve = async (ask: (client: Connected['client']) => Promise<unknown>) => {
          c = await connectStdio({
            era: 'legacy',
            args: ['--skills', skills.dir, ...flags, '--log-level', 'info'],
            env: { SKILLS_MCP_AUDIT: join(state, 'audit.db') },
          });
          const answer = await ask(c.client);
          const stderr = c.stderr();
          await c.close();
          c = undefined;
          return { answer, stderr };
        };
        await serve((client) => client.listTools());
        // Neither the skill file nor the skill folder's own entries change: the start takes the skill from the cache.
        const references = join(skills.dir, 'commit-message', 'references');
        appendFileSync(join(references, 'conventional-commits.md'), '\nOne more line.\n');
        writeFileSync(join(references, 'examples', 'new.txt'), 'feat: a new example\n');
        const files = (r: unknown) =>
          (r as { structuredContent: { files: { path: string; size: number }[] } }).structuredContent.files;
        const second = await serve(async (client) => {
          await client.listTools();
          return client.callTool({ name: 'commit-message', arguments: {} });
        });
        expect(second.stderr).toContain('"cached":4');
        const listed = files(second.answer);
        expect(listed.map((f) => f.path)).toContain('references/examples/new.txt');
        expect(listed.find((f) => f.path === 'references/conventional-commits.md')?.size).toBe(
          statSync(join(references, 'conventional-commits.md')).size,
        );
        const resources = await serve(async (client) => (await client.listResources()).resources);
        expect((resources.answer as { uri: string }[]).map((r) => r.uri)).toContain(
          'skill://commit-message/references/examples/new.txt',
        );
      } finally {
        skills.cleanup();
      }
    },
  );
});
