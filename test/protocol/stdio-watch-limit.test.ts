import type { Client } from '@modelcontextprotocol/client';
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { waitFor } from '../helpers/wait-for.js';
import { startServer } from '../helpers/server-under-test.js';
import { copyBundledSkills } from '../helpers/temp-dir.js';

/**
 * The server in a user namespace of its own whose inotify watch limit is 3 (`user.max_inotify_watches`, which a
 * namespace's owner may lower for it): the skills root and two skill folders get a watch, the rest hit ENOSPC.
 */
describe('hot reload past the inotify watch limit', () => {
  let skills: { dir: string; cleanup: () => void } | undefined;
  let client: Client | undefined;
  afterEach(async () => {
    await client?.close();
    skills?.cleanup();
  });

  it('warns once with the fix, keeps serving, and still sees skills added to the root', async () => {
    skills = copyBundledSkills();
    const audit = join(dirname(skills.dir), 'audit.db'); // beside the copy, removed with it
    const seen: string[][] = [];
    const c = await startServer({
      transport: 'stdio',
      era: 'legacy',
      prefix: [
        'unshare',
        '--user',
        '--map-root-user',
        'sh',
        '-c',
        'echo 3 > /proc/sys/user/max_inotify_watches && exec "$0" "$@"',
      ],
      skills: [skills.dir],
      args: ['--log-level', 'debug'],
      env: { SKILLS_MCP_AUDIT: audit },
      listChanged: {
        tools: {
          onChanged: (_e: unknown, tools: { name: string }[] | null) =>
            seen.push((tools ?? []).map((t) => t.name)),
        },
      },
    });
    client = c.client;
    const stderr = c.stderr;
    expect((await client.listTools()).tools.map((t) => t.name)).toContain('csv-stats');
    await waitFor(() => stderr().includes('watching the skill folders'), 10_000, 'the watch set-up to end');

    const warnings = stderr()
      .split('\n')
      .filter((l) => l.includes('inotify watch limit'));
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain('"level":40');
    expect(warnings[0]).toContain('fs.inotify.max_user_watches');
    expect(warnings[0]).toContain('ENOSPC');

    mkdirSync(join(skills.dir, 'fresh-skill'));
    writeFileSync(
      join(skills.dir, 'fresh-skill', 'SKILL.md'),
      '---\nname: fresh-skill\ndescription: A new skill. Use it in tests.\n---\n\nDo the thing.\n',
    );
    await waitFor(() => seen.some((t) => t.includes('fresh-skill')), 10_000, 'the added skill');
    const call = await client.callTool({ name: 'commit-message', arguments: {} });
    expect(call.isError).toBeFalsy();
    expect(
      stderr()
        .split('\n')
        .filter((l) => l.includes('inotify watch limit')),
    ).toHaveLength(1);
    expect(c.errors).toEqual([]);
  });
});
