import { chmodSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { approveEvery, gatedServers } from '../helpers/gated-server.js';
import { runCli } from '../helpers/run-cli.js';
import { tempDir } from '../helpers/temp-dir.js';
import { textOf } from '../helpers/text-of.js';
import { writeZip, type ZipEntryInput } from '../helpers/write-zip.js';

const SKILL_MD =
  '---\nname: zipped\ndescription: Echoes from inside an archive. Use in tests.\nentry_point: scripts/main.py\n---\n\nzipped.\n';
const MAIN = 'import json, sys\nprint(json.dumps({"from": "archive", "got": json.load(sys.stdin)}))\n';
const good = (): ZipEntryInput[] => [
  { name: 'zipped/SKILL.md', data: SKILL_MD, deflate: true },
  { name: 'zipped/scripts/main.py', data: MAIN, mode: 0o100755 },
];

describe('skill archives (.skill / .zip)', () => {
  const t = tempDir();
  afterAll(t.cleanup);
  const start = gatedServers();

  it('serves a .skill archive and runs its script after approval through the real client', async () => {
    const { c, fx } = await start('approval:\n  mode: ask\n', {
      setup: (f) => writeFileSync(join(f.skills, 'zipped.skill'), writeZip(good())),
    });
    approveEvery(c);
    const tools = await c.client.listTools();
    expect(tools.tools.map((x) => x.name)).toContain('zipped');
    const r = await c.client.callTool({ name: 'zipped', arguments: { text: 'hi' } });
    expect(textOf(r)).toContain('"from": "archive"');
    const archives = join(fx.dir, 'state', 'sources', 'archives');
    expect(readdirSync(archives)).toHaveLength(1);
  });

  const hostile: [string, ZipEntryInput[], RegExp][] = [
    [
      'an entry that climbs out of its folder',
      [...good(), { name: 'zipped/../../evil.py', data: 'x' }],
      /zipped\/\.\.\/\.\.\/evil\.py: name climbs out/,
    ],
    ['an absolute entry name', [...good(), { name: '/etc/evil', data: 'x' }], /\/etc\/evil: absolute name/],
    ['a drive letter', [...good(), { name: 'C:/evil', data: 'x' }], /C:\/evil: absolute name/],
    ['a backslash', [...good(), { name: 'zipped\\..\\evil', data: 'x' }], /name holds a backslash/],
    [
      'a symlink entry',
      [...good(), { name: 'zipped/link', data: '/etc/passwd', mode: 0o120777 }],
      /zipped\/link: links are not allowed/,
    ],
    [
      'a duplicate name',
      [...good(), { name: 'zipped/SKILL.md', data: 'again' }],
      /zipped\/SKILL\.md: duplicate name/,
    ],
    [
      'an encrypted entry',
      [...good(), { name: 'zipped/secret', data: 'x', flags: 1 }],
      /zipped\/secret: encrypted entries/,
    ],
    [
      'a compression bomb',
      [...good(), { name: 'zipped/bomb', data: Buffer.alloc(4 * 1024 * 1024), deflate: true }],
      /zipped\/bomb: compression ratio above/,
    ],
    [
      'a name longer than the limit',
      [...good(), { name: `zipped/${'a'.repeat(300)}`, data: 'x' }],
      /name longer than 255 bytes/,
    ],
  ];
  it.each(hostile)('refuses %s, naming the entry, in lint and list', (_what, entries, message) => {
    const dir = join(t.dir, `hostile-${readdirSync(t.dir).length}`);
    const skills = join(dir, 'skills');
    const state = join(dir, 'state');
    mkdirSync(skills, { recursive: true });
    writeFileSync(join(skills, 'zipped.skill'), writeZip(entries));
    const env = { XDG_STATE_HOME: state };
    const lint = runCli(['lint', skills], { env });
    expect(lint.code).toBe(1);
    expect(lint.stdout).toMatch(/zipped\.skill(:1)?: archive-refused: skill archive not served: /);
    expect(lint.stdout).toMatch(message);
    const list = runCli(['list', '--skills', skills], { env });
    expect(list.stdout).toContain('0 skills');
    expect(list.stderr).toMatch(message);
  });

  /** A skills folder holding the good archive, linted once (so extracted); the extracted skill folder. */
  const linted = (label: string) => {
    const skills = join(t.dir, label, 'skills');
    mkdirSync(skills, { recursive: true });
    writeFileSync(join(skills, 'zipped.skill'), writeZip(good()));
    const env = { XDG_STATE_HOME: join(t.dir, label, 'state') };
    expect(runCli(['lint', skills], { env }).code).toBe(0);
    const archives = join(t.dir, label, 'state', 'skills-mcp', 'sources', 'archives');
    return { skills, env, skill: join(archives, readdirSync(archives)[0]!, 'zipped') };
  };

  it('extracts again when the extracted copy was altered, and serves the archive as it is', () => {
    const { skills, env, skill } = linted('tamper');
    const main = join(skill, 'scripts', 'main.py');
    chmodSync(join(skill, 'scripts'), 0o755);
    chmodSync(main, 0o644);
    writeFileSync(main, 'print("tampered")\n');
    const r = runCli(['list', '--skills', skills, '--json'], { env });
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout).skills.map((s: { name: string }) => s.name)).toEqual(['zipped']);
    expect(readFileSync(main, 'utf8')).toBe(MAIN);
  });
  /** Lints a skills folder holding one archive of `entries`; returns what lint printed. */
  const lintArchive = (label: string, entries: ZipEntryInput[]) => {
    const skills = join(t.dir, label, 'skills');
    mkdirSync(skills, { recursive: true });
    writeFileSync(join(skills, 'zipped.skill'), writeZip(entries));
    const r = runCli(['lint', skills], { env: { XDG_STATE_HOME: join(t.dir, label, 'state') } });
    return { code: r.code, out: r.stdout + r.stderr };
  };

  it('refuses an entry whose local header names another file than the central directory', () => {
    const r = lintArchive('local-name', [
      { name: 'zipped/SKILL.md', data: SKILL_MD },
      { name: 'zipped/scripts/main.py', localName: '../../main.py', data: MAIN, mode: 0o100755 },
    ]);
    expect(r.out).toContain(
      'skill archive not served: zipped/scripts/main.py: the local header names another file',
    );
    expect(r.code).not.toBe(0);
  });

  it('refuses two entries whose names differ only in case or Unicode form', () => {
    for (const [label, other] of [
      ['case', 'zipped/scripts/MAIN.py'],
      ['nfd', 'zipped/scripts/ma\u0301in.py'],
    ] as const) {
      const accented = label === 'nfd' ? 'zipped/scripts/m\u00e1in.py' : 'zipped/scripts/main.py';
      const r = lintArchive(`collide-${label}`, [
        { name: 'zipped/SKILL.md', data: SKILL_MD },
        { name: accented, data: MAIN, mode: 0o100755 },
        { name: other, data: 'print("other")\n' },
      ]);
      expect(r.out).toContain('differs only in case or Unicode form from');
      expect(r.code).not.toBe(0);
    }
  });

  it('extracts again when a file of the extracted copy was made executable or a folder writable', () => {
    const { skills, env, skill } = linted('modes');
    const skillMd = join(skill, 'SKILL.md');
    const scripts = join(skill, 'scripts');
    chmodSync(skillMd, 0o555);
    chmodSync(scripts, 0o755);
    expect(runCli(['lint', skills], { env }).code).toBe(0);
    expect(statSync(skillMd).mode & 0o777).toBe(0o444);
    expect(statSync(scripts).mode & 0o777).toBe(0o555);
  });
});
