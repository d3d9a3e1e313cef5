import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startInProcess, type InProcessServer } from '../helpers/in-process-server.js';
import { tempDir } from '../helpers/temp-dir.js';
import { textOf } from '../helpers/text-of.js';

/** What docx skills do: copy a template of their own into the output, then edit the copy. */
const TEMPLATER = `import os, shutil
skill = os.environ["SKILL_DIR"]
dest = os.path.join(os.environ["SKILL_FILES_DIR"], "word")
os.makedirs(dest, exist_ok=True)
out = shutil.copy(os.path.join(skill, "templates", "comments.xml"), os.path.join(dest, "comments.xml"))
with open(out, "a") as f:
    f.write("<w:comment>edited</w:comment>\\n")
shutil.copytree(os.path.join(skill, "templates"), os.path.join(dest, "tree"))
open(os.path.join(dest, "tree", "comments.xml"), "a").write("again\\n")
print("edited", open(out).read().count("<w:comment>"))
`;

/** Writes the workspace without having asked for `workspace: write`. */
const WRITER = `import os
open(os.path.join(os.environ["SKILL_WORKSPACE"], "report.txt"), "w").write("x")
`;

/**
 * Fetches a package index the way an installer would. It first proves it is in a private network namespace (only
 * \`lo\`), and refuses otherwise: the name is never resolved against a real server.
 */
const FETCHER = `import socket, sys, urllib.request
if [n for _, n in socket.if_nameindex()] != ["lo"]:
    sys.exit("refusing: not in a private network namespace")
urllib.request.urlopen("https://pypi.org/simple/", timeout=5)
`;

/** Reads a file from the operator's extra read-only path, then tries to change it. */
const READER = `import os, sys
p = sys.argv[1]
print("read", open(p).read().strip())
try:
    open(p, "a").write("changed")
except OSError as e:
    print("write refused", e.errno)
`;

const skill = (root: string, name: string, script: string, extra = '') => {
  mkdirSync(join(root, name, 'scripts'), { recursive: true });
  writeFileSync(
    join(root, name, 'SKILL.md'),
    `---\nname: ${name}\ndescription: Test skill ${name}.\nentry_point: scripts/main.py\n${extra}---\n\nUse it.\n`,
  );
  writeFileSync(join(root, name, 'scripts', 'main.py'), script);
};

describe('what real skills need from the sandbox (in-process server, real sandbox)', () => {
  const t = tempDir();
  const skills = join(t.dir, 'skills');
  const ws = join(t.dir, 'workspace');
  const extra = join(t.dir, 'extra-fonts');
  let server: InProcessServer;
  let client: Client;

  beforeAll(async () => {
    skill(skills, 'templater', TEMPLATER);
    mkdirSync(join(skills, 'templater', 'templates'));
    writeFileSync(
      join(skills, 'templater', 'templates', 'comments.xml'),
      '<w:comment>template</w:comment>\n',
    );
    skill(skills, 'writer', WRITER);
    skill(skills, 'fetcher', FETCHER);
    skill(skills, 'reader', READER, 'input_schema:\n  type: object\n');
    mkdirSync(ws);
    mkdirSync(extra);
    writeFileSync(join(extra, 'font.txt'), 'a font\n');
    server = startInProcess({
      skills: [skills],
      root: join(t.dir, 'state'),
      config: {
        workspace: ws,
        sandbox: { read_only_paths: [extra] },
        // Reading a workspace asks under `mode: allow` alone: the operator allows these skills by name.
        approval: {
          rules: ['templater', 'writer', 'fetcher', 'reader'].map((skill) => ({ skill, action: 'allow' })),
        },
      },
    });
    client = await server.connect('needs');
  });
  afterAll(async () => {
    await server.close();
    t.cleanup();
  });

  it('lets a script copy a template of its own and edit the copy', async () => {
    const r = await client.callTool({ name: 'templater', arguments: {} });
    expect(textOf(r)).not.toContain('PermissionError');
    expect(r.isError, textOf(r)).toBeFalsy();
    expect(textOf(r)).toContain('edited 2');
  });

  it('mounts the operator’s extra read-only path, read-only', async () => {
    const r = await client.callTool({
      name: 'run_skill_script',
      arguments: { skill: 'reader', script: 'scripts/main.py', args: [join(extra, 'font.txt')] },
    });
    expect(r.isError, textOf(r)).toBeFalsy();
    expect(textOf(r)).toContain('read a font');
    // EACCES before EROFS when the sandbox user does not own the file (a root server); EROFS otherwise.
    expect(textOf(r)).toMatch(/write refused (13|30)/);
    expect(readFileSync(join(extra, 'font.txt'), 'utf8')).toBe('a font\n');
  });

  it('names `workspace: write` when a script fails writing a read-only workspace', async () => {
    const r = await client.callTool({ name: 'writer', arguments: {} });
    expect(r.isError).toBe(true);
    expect(textOf(r)).toContain('[Errno 30] Read-only file system');
    expect(textOf(r)).toContain('workspace: write');
    expect(() => readFileSync(join(ws, 'report.txt'))).toThrow();
  });

  it('says the network is off, and how to turn it on, when a script cannot resolve a name', async () => {
    const r = await client.callTool({ name: 'fetcher', arguments: {} });
    expect(r.isError).toBe(true);
    expect(textOf(r)).not.toContain('refusing');
    expect(textOf(r)).toMatch(/name resolution|Name or service not known/);
    expect(textOf(r)).toContain('network: full');
  });
});
