import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { GatedFixture } from '../helpers/gated-fixture.js';
import { approveEvery, gatedServers } from '../helpers/gated-server.js';
import { connectStdio, type Connected } from '../helpers/stdio-client.js';
import { textOf } from '../helpers/text-of.js';

const sha256 = (s: string) => createHash('sha256').update(s, 'utf8').digest('hex');

/**
 * The three steps a model following a docx skill takes, one call each. Each script keeps its work in
 * $SKILL_SESSION_DIR, falling back to its working folder (the per-call files folder) where there is none: on a
 * server without session folders, step 1 still unpacks, and step 2 then finds nothing.
 */
const WORK = `import os\nwork = os.environ.get("SKILL_SESSION_DIR", os.getcwd())\n`;
const UNPACK = `${WORK}import sys, zipfile
zipfile.ZipFile(os.path.join(os.environ["SKILL_WORKSPACE"], sys.argv[1])).extractall(os.path.join(work, "unpacked"))
print("unpacked", sorted(os.listdir(os.path.join(work, "unpacked"))))
`;
const EDIT = `${WORK}p = os.path.join(work, "unpacked", "word", "document.xml")
xml = open(p).read()
open(p, "w").write(xml.replace("Hello", "Goodbye"))
print("edited")
`;
const PACK = `${WORK}import sys, zipfile
src = os.path.join(work, "unpacked")
with zipfile.ZipFile(os.path.join(os.environ["SKILL_FILES_DIR"], sys.argv[1]), "w") as z:
    for root, _, files in os.walk(src):
        for f in sorted(files):
            full = os.path.join(root, f)
            z.write(full, os.path.relpath(full, src))
print("packed")
`;
/** Plants links out of the session folder: to a canary file and to a canary folder of many files. */
const PLANT = `import os, sys
d = os.environ["SKILL_SESSION_DIR"]
os.symlink(sys.argv[1], os.path.join(d, "escape.txt"))
os.symlink(sys.argv[2], os.path.join(d, "outside"))
open(os.path.join(d, "mine.txt"), "w").write("mine")
print("planted")
`;
/** What this run sees of the session folder, and whether it can reach another path (given). */
const PEEK = `import os, sys
d = os.environ.get("SKILL_SESSION_DIR")
print("session", sorted(os.listdir(d)) if d else None)
try:
    print("other", sorted(os.listdir(sys.argv[1])))
except OSError as e:
    print("other refused", e.errno)
`;
const FILL = `import os, sys
d = os.environ["SKILL_SESSION_DIR"]
for i in range(int(sys.argv[1])):
    open(os.path.join(d, f"f{i}.txt"), "w").write("x" * int(sys.argv[2]))
print("filled")
`;

function addSteps(fx: GatedFixture): void {
  const dir = join(fx.skills, 'docx');
  mkdirSync(join(dir, 'scripts'), { recursive: true });
  writeFileSync(
    join(dir, 'SKILL.md'),
    '---\nname: docx\ndescription: Unpacks, edits and packs .docx files. Use in tests.\n---\n\nRun unpack, edit, pack.\n',
  );
  const scripts = { UNPACK, EDIT, PACK, PLANT, PEEK, FILL };
  for (const [name, body] of Object.entries(scripts))
    writeFileSync(join(dir, 'scripts', `${name.toLowerCase()}.py`), body);
  const ws = join(fx.dir, 'workspace');
  mkdirSync(ws);
  // A tiny .docx: a zip holding word/document.xml and [Content_Types].xml.
  execFileSync('python3', [
    '-c',
    'import sys, zipfile\nwith zipfile.ZipFile(sys.argv[1], "w") as z:\n' +
      '    z.writestr("[Content_Types].xml", "<Types/>")\n' +
      '    z.writestr("word/document.xml", "<w:document><w:t>Hello world</w:t></w:document>")\n',
    join(ws, 'report.docx'),
  ]);
}

const run = (c: Connected, script: string, args: string[] = []) =>
  c.client.callTool({ name: 'run_skill_script', arguments: { skill: 'docx', script, args } });

const sessionsOf = (fx: GatedFixture) => join(dirname(fx.auditPath), 'runs', 'sessions');
const listed = (fx: GatedFixture) => (existsSync(sessionsOf(fx)) ? readdirSync(sessionsOf(fx)) : []);

describe('the session working folder (built binary, real sandbox)', () => {
  const start = gatedServers();
  const opts = {
    era: 'legacy' as const,
    setup: addSteps,
    args: (fx: GatedFixture) => ['--workspace', join(fx.dir, 'workspace')],
  };

  it('carries an unpack, an edit and a pack across three calls, says so on the form, and is gone with the session', async () => {
    const { fx, c } = await start('approval:\n  mode: ask\n', opts);
    const messages: string[] = [];
    c.client.setRequestHandler('elicitation/create', (req) => {
      messages.push((req.params as { message: string }).message);
      return Promise.resolve({ action: 'accept', content: { decision: 'approved' } });
    });

    const one = await run(c, 'scripts/unpack.py', ['report.docx']);
    expect(textOf(one)).toContain("unpacked ['[Content_Types].xml', 'word']");
    const two = await run(c, 'scripts/edit.py');
    expect(two.isError, textOf(two)).toBeFalsy();
    const three = await run(c, 'scripts/pack.py', ['report-edited.docx']);
    expect(three.isError, textOf(three)).toBeFalsy();

    // The client gets the packed document back, and the edit is in it.
    const link = (three.content as { type: string; uri?: string }[]).find((p) => p.uri?.endsWith('.docx'));
    const read = await c.client.readResource({ uri: link!.uri! });
    const blob = (read.contents[0] as { blob: string }).blob;
    const packed = join(fx.dir, 'got.docx');
    writeFileSync(packed, Buffer.from(blob, 'base64'));
    const xml = execFileSync('python3', [
      '-c',
      'import sys, zipfile; print(zipfile.ZipFile(sys.argv[1]).read("word/document.xml").decode())',
      packed,
    ]).toString();
    expect(xml).toContain('Goodbye world');

    // The session's files are resources of the session.
    const { resources } = await c.client.listResources();
    const own = resources.filter((r) => r.uri.startsWith('skill-session://'));
    expect(own.map((r) => r.uri).sort()).toEqual([
      'skill-session://files/unpacked/%5BContent_Types%5D.xml',
      'skill-session://files/unpacked/word/document.xml',
    ]);
    const doc = await c.client.readResource({ uri: 'skill-session://files/unpacked/word/document.xml' });
    expect((doc.contents[0] as { text: string }).text).toContain('Goodbye world');

    // The form said the run reads and changes the session folder, and the log holds the digest of that text.
    expect(messages).toHaveLength(3);
    const [folder] = listed(fx);
    expect(messages[0]).toContain(
      `this run can read and change the session folder ${join(sessionsOf(fx), folder!)}`,
    );
    expect(messages[0]).toMatch(/what an earlier run of this session left there is input to this one/);
    const callId = (one._meta as Record<string, string>)['skills-mcp/call_id']!;
    await c.close();
    const store = fx.audit();
    const asked = store.getCall(callId)?.events.find((e) => e.type === 'approval_requested');
    store.close();
    expect(asked?.payload).toMatchObject({ shown: { message_sha256: sha256(messages[0]!) } });
    // The session ended with its client: its folder is gone.
    expect(listed(fx)).toEqual([]);
  });

  it('is private to its session: another session neither sees nor reaches it', async () => {
    const { fx, c } = await start('approval:\n  mode: ask\n', opts);
    approveEvery(c);
    expect(textOf(await run(c, 'scripts/unpack.py', ['report.docx']))).toContain('unpacked');
    const [folder] = listed(fx);
    const first = join(sessionsOf(fx), folder!);

    // A second client, its own server process on the same state folder: another session.
    const other = await connectStdio({
      era: 'legacy',
      args: [...fx.args, '--workspace', join(fx.dir, 'workspace')],
      capabilities: { elicitation: { form: {} } },
    });
    approveEvery(other);
    try {
      const { resources } = await other.client.listResources();
      expect(resources.filter((r) => r.uri.startsWith('skill-session://'))).toEqual([]);
      await expect(
        other.client.readResource({ uri: 'skill-session://files/unpacked/word/document.xml' }),
      ).rejects.toThrow(/no such file in this session's folder/);
      const peek = await other.client.callTool({
        name: 'run_skill_script',
        arguments: { skill: 'docx', script: 'scripts/peek.py', args: [first] },
      });
      expect(textOf(peek)).toContain('session []');
      expect(textOf(peek)).toMatch(/other refused \d+/);
    } finally {
      await other.close();
    }
    // The first session's files are untouched.
    expect(readdirSync(join(first, 'unpacked'))).toEqual(['[Content_Types].xml', 'word']);
  });

  it('enforces its caps with a clear error and empties the folder', async () => {
    const { fx, c } = await start(
      'approval:\n  mode: ask\nruns:\n  session_folder:\n    max_files: 5\n    max_bytes: 10000\n',
      opts,
    );
    approveEvery(c);
    const many = await run(c, 'scripts/fill.py', ['8', '1']);
    expect(many.isError).toBe(true);
    expect(textOf(many)).toMatch(
      /^SESSION_FOLDER_FULL: .*more than 5 entries \(runs\.session_folder\.max_files\)/,
    );
    // Emptied: nothing of it is left (the next run makes it anew).
    expect(listed(fx)).toEqual([]);

    const big = await run(c, 'scripts/fill.py', ['2', '6000']);
    expect(big.isError).toBe(true);
    expect(textOf(big)).toMatch(/more than 10000 bytes \(runs\.session_folder\.max_bytes\)/);
    const fits = await run(c, 'scripts/fill.py', ['3', '100']);
    expect(fits.isError, textOf(fits)).toBeFalsy();
    const [folder] = listed(fx);
    expect(readdirSync(join(sessionsOf(fx), folder!)).sort()).toEqual(['f0.txt', 'f1.txt', 'f2.txt']);
  });

  it('never follows a link a script made there: not when serving it, counting it, or removing it', async () => {
    const { fx, c } = await start(
      'approval:\n  mode: ask\nruns:\n  session_folder:\n    max_files: 10\n',
      opts,
    );
    approveEvery(c);
    const canary = join(fx.dir, 'canary.txt');
    writeFileSync(canary, 'CANARY-SECRET');
    const many = join(fx.dir, 'canary-dir');
    mkdirSync(many);
    for (let i = 0; i < 20; i++) writeFileSync(join(many, `c${i}.txt`), 'CANARY-SECRET');

    const planted = await run(c, 'scripts/plant.py', [canary, many]);
    // Counted without following "outside": 3 entries, not 23.
    expect(planted.isError, textOf(planted)).toBeFalsy();
    const { resources } = await c.client.listResources();
    expect(resources.filter((r) => r.uri.startsWith('skill-session://')).map((r) => r.uri)).toEqual([
      'skill-session://files/mine.txt',
    ]);
    for (const uri of ['skill-session://files/escape.txt', 'skill-session://files/outside/c0.txt'])
      await expect(c.client.readResource({ uri })).rejects.toThrow(/no such file in this session's folder/);
    // The next run's setup goes ahead on the folder as left, links and all.
    const next = await run(c, 'scripts/peek.py', [many]);
    expect(textOf(next)).toContain("session ['escape.txt', 'mine.txt', 'outside']");
    await c.close();
    // Removed with the session, and the canaries outside were not.
    expect(listed(fx)).toEqual([]);
    expect(readFileSync(canary, 'utf8')).toBe('CANARY-SECRET');
    expect(readdirSync(many)).toHaveLength(20);
  });
});
