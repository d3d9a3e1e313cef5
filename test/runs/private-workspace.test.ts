import type { Client } from '@modelcontextprotocol/client';
import { chmodSync, chownSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { removeTree } from '../../src/envs/env-store.js';
import { startServer } from '../helpers/server-under-test.js';

type Text = { type: 'text'; text: string };
const isRoot = process.getuid?.() === 0;
/** An ordinary user for the second server (no passwd entry needed: uid/gid only). */
const USER = { uid: 23456, gid: 23456 };
const READER = [
  'import json, os',
  'ws = os.environ["SKILL_WORKSPACE"]',
  'data = open(os.path.join(ws, "notes", "data.txt")).read()',
  'try:',
  '    open(os.path.join(ws, "new.txt"), "w").write("x")',
  '    wrote = "written"',
  'except OSError as e:',
  '    wrote = type(e).__name__',
  'try:',
  '    private = open(os.path.join(ws, "private.txt")).read()',
  'except OSError as e:',
  '    private = type(e).__name__',
  'try:',
  '    beside = sorted(os.listdir(os.path.dirname(ws)))',
  'except OSError as e:',
  '    beside = type(e).__name__',
  'print(json.dumps({"data": data, "write": wrote, "listing": sorted(os.listdir(ws)), "beside": beside, "private": private}))',
].join('\n');

type Private = 'parent' | 'folder';

/**
 * A skills folder, a config, and a workspace only its owner may enter, all owned by `owner`: under a mode-700 parent
 * (`/root/project`, a `mktemp -d`), or the workspace folder itself mode 700.
 */
function layout(which: Private, owner?: { uid: number; gid: number }) {
  const root = mkdtempSync(join(tmpdir(), 'skills-mcp-ws-'));
  chmodSync(root, 0o755);
  const parent = join(root, 'private'); // like /root or a `mktemp -d`: only its owner may enter
  const ws = join(parent, 'project');
  mkdirSync(join(ws, 'notes'), { recursive: true });
  writeFileSync(join(ws, 'notes', 'data.txt'), 'workspace data');
  writeFileSync(join(parent, 'beside.txt'), 'not part of the workspace');
  // With a root server, a file only root may read: its scripts (uid 65534) may not read it either.
  if (isRoot && owner === undefined)
    writeFileSync(join(ws, 'private.txt'), 'private to its owner', { mode: 0o600 });
  for (const [name, mode] of [
    ['ws-reader', 'read'],
    ['ws-writer', 'write'],
  ] as const) {
    mkdirSync(join(root, 'skills', name, 'scripts'), { recursive: true });
    writeFileSync(
      join(root, 'skills', name, 'SKILL.md'),
      `---\nname: ${name}\ndescription: Uses the workspace (${mode}). Use in tests.\nworkspace: ${mode}\n---\n\nx\n`,
    );
    writeFileSync(join(root, 'skills', name, 'scripts', 'main.py'), READER);
  }
  writeFileSync(
    join(root, 'skills-mcp.yaml'),
    'approval:\n  mode: allow\n  fallback: rules-only\n  rules:\n    - skill: ws-writer\n      action: allow\n    - skill: ws-reader\n      action: allow\n',
  );
  mkdirSync(join(root, 'state'));
  if (owner !== undefined) {
    const own = (p: string) => chownSync(p, owner.uid, owner.gid);
    for (const p of [
      root,
      parent,
      ws,
      join(ws, 'notes'),
      join(ws, 'notes', 'data.txt'),
      join(parent, 'beside.txt'),
      join(root, 'state'),
    ])
      own(p);
  }
  chmodSync(which === 'parent' ? parent : ws, 0o700);
  return { root, ws };
}

async function connect(root: string, ws: string, asUser?: { uid: number; gid: number }) {
  const { client } = await startServer({
    transport: 'stdio',
    era: 'legacy',
    ...(asUser === undefined
      ? {}
      : {
          prefix: [
            '/usr/bin/setpriv',
            `--reuid=${asUser.uid}`,
            `--regid=${asUser.gid}`,
            '--clear-groups',
            '--',
          ],
        }),
    skills: [join(root, 'skills')],
    args: [
      '--config',
      join(root, 'skills-mcp.yaml'),
      '--audit',
      join(root, 'state', 'audit.db'),
      '--workspace',
      ws,
      '--no-watch',
    ],
    // The ordinary user cannot enter root's pyenv: it gets the system python3.
    env: { PATH: asUser === undefined ? (process.env.PATH ?? '/usr/bin:/bin') : '/usr/bin:/bin', HOME: root },
    ownAudit: false,
  });
  return client;
}

const run = async (client: Client, skill: string) => {
  const r = await client.callTool({
    name: 'run_skill_script',
    arguments: { skill, script: 'scripts/main.py' },
  });
  if (r.isError) throw new Error((r.content as Text[]).map((c) => c.text).join('\n'));
  return r.structuredContent as {
    data: string;
    write: string;
    listing: string[];
    beside: unknown;
    private: string;
  };
};

const servers = [
  ['the server user', undefined],
  ...(isRoot ? ([['an ordinary user (server started by root with setpriv)', USER]] as const) : []),
] as const;
const where = { parent: 'under a mode-700 parent', folder: 'that is itself a mode-700 folder' } as const;

describe.each(
  (['parent', 'folder'] as const).flatMap((which) =>
    servers.map(([label, user]) => [where[which], label, which, user] as const),
  ),
)('a workspace %s, server run as %s', (_where, _label, which, user) => {
  const { root, ws } = layout(which, user);
  let client: Client;
  afterAll(async () => {
    await client?.close();
    removeTree(root);
  });

  it('is readable inside the sandbox and read-only unless the skill is granted writes', async () => {
    client = await connect(root, ws, user);
    const r = await run(client, 'ws-reader');
    expect(r.data).toBe('workspace data');
    expect(r.write).toMatch(/^(OSError|PermissionError)$/); // EROFS / EACCES
    expect(r.listing).toContain('notes');
    if (isRoot && user === undefined) expect(r.private).toMatch(/^(PermissionError|FileNotFoundError)$/);
    expect(JSON.stringify(r)).not.toContain('private to its owner');
    // Only the workspace is there: nothing else of its parent folder.
    expect(r.beside).not.toContainEqual('beside.txt');
    expect(JSON.stringify(r)).not.toContain('not part of the workspace');
  });

  it('takes writes from a skill granted them, at the same path on the host', async () => {
    const r = await run(client, 'ws-writer');
    expect(r).toMatchObject({ data: 'workspace data', write: 'written' });
    expect(readFileSync(join(ws, 'new.txt'), 'utf8')).toBe('x');
  });
});
