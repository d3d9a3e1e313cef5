import {
  chmodSync,
  existsSync,
  lstatSync,
  mkdirSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadCatalog, type Catalog } from '../../src/skills/catalog.js';
import { readSkillBody } from '../../src/skills/read-skill-body.js';
import type { Finding } from '../../src/skills/types.js';
import { repoRoot, tempDir } from '../helpers/temp-dir.js';

const fixtures = join(repoRoot, 'test', 'fixtures', 'roots');
const roots = ['main', 'second', 'plugin'].map((r) => join(fixtures, r));
const canaries = ['skills-mcp-js-frontmatter-canary', 'skills-mcp-javascript-frontmatter-canary'].map((c) =>
  join(tmpdir(), c),
);

const folderOf = (f: Finding) =>
  f.path
    .slice(fixtures.length + 1)
    .split('/')
    .slice(0, 2)
    .join('/');

describe('catalog over the bad-input fixture corpus', () => {
  let catalog: Catalog;
  beforeAll(() => {
    for (const c of canaries) rmSync(c, { force: true });
    catalog = loadCatalog(roots);
  });

  it('serves exactly the skills the corpus README lists', () => {
    expect(catalog.skills.map((s) => s.name).sort()).toEqual(
      [
        'Bad_Name--X',
        'allowed-tools-invalid',
        'allowed-tools-list',
        'allowed-tools-string',
        'argparse-entry',
        'block-scalar',
        'block-scalar-literal',
        'bom-crlf',
        'compat-too-long',
        'entry-missing',
        'executable-entry',
        'file-symlink-escape',
        'inner-skill',
        'long-description',
        'lowercase-skill-md',
        'metadata-not-strings',
        'other-name',
        'unknown-fields',
      ].sort(),
    );
  });

  it.each([
    ['main/malformed-yaml', 'frontmatter-yaml'],
    ['main/missing-name', 'name-missing'],
    ['main/js-frontmatter', 'frontmatter-engine'],
    ['main/javascript-frontmatter', 'frontmatter-engine'],
    ['main/binary-skill-md', 'not-text'],
    ['main/symlink-outside', 'symlink-outside-root'],
    ['main/empty-description', 'description-missing'],
    ['main/no-frontmatter', 'frontmatter-missing'],
    ['main/frontmatter-not-mapping', 'frontmatter-yaml'],
    ['main/unclosed-frontmatter', 'frontmatter-yaml'],
    ['main/dup-skill', 'duplicate-name'],
    ['second/dup-skill', 'duplicate-name'],
  ])('skips %s with rule %s', (folder, rule) => {
    const hits = catalog.findings.filter((f) => folderOf(f) === folder);
    expect(hits.map((f) => [f.rule, f.severity])).toEqual([[rule, 'error']]);
  });

  it.each([
    ['other-name', ['name-folder-mismatch']],
    ['long-description', ['description-too-long']],
    ['allowed-tools-invalid', ['allowed-tools-format']],
    ['Bad_Name--X', ['name-format', 'name-folder-mismatch']],
    ['file-symlink-escape', ['file-symlink-escape']],
    ['entry-missing', ['entry-point-missing']],
    ['compat-too-long', ['compatibility-too-long']],
    ['metadata-not-strings', ['metadata-format']],
    ['unknown-fields', []],
    ['bom-crlf', []],
    ['block-scalar', []],
    ['lowercase-skill-md', []],
  ])('loads %s with warnings %j', (name, rules) => {
    const skill = catalog.get(name)!;
    expect(skill.warnings.map((w) => w.rule)).toEqual(rules);
  });

  it('never executes ---js or ---javascript frontmatter', () => {
    for (const c of canaries) expect(existsSync(c)).toBe(false);
  });

  it('reads allowed-tools as a list and as a space-separated string alike', () => {
    expect(catalog.get('allowed-tools-list')!.allowedTools).toEqual(['Read', 'Grep', 'Bash(python3:*)']);
    expect(catalog.get('allowed-tools-string')!.allowedTools).toEqual(['Read', 'Grep', 'Bash(python3:*)']);
  });

  it('strips the BOM and CRLF line endings', () => {
    const s = catalog.get('bom-crlf')!;
    expect(s.description).not.toContain('\r');
    expect(readSkillBody(s)).not.toContain('\r');
  });

  it('keeps a symlinked file that leaves the skill out of its file list', () => {
    expect(catalog.get('file-symlink-escape')!.files.map((f) => f.path)).toEqual([
      'SKILL.md',
      'references/guide.md',
    ]);
  });

  it('serves neither folder of a name claimed in two roots, and reports both', () => {
    expect(catalog.get('dup-skill')).toBeUndefined();
  });

  it('finds skills in a nested skills/ folder (plugin layout)', () => {
    expect(catalog.get('inner-skill')!.root).toBe(join(fixtures, 'plugin'));
  });

  it('treats a declared entry point as executable and a missing one as instructions', () => {
    expect(catalog.get('executable-entry')).toMatchObject({
      kind: 'executable',
      entryPoint: 'scripts/main.py',
    });
    expect(catalog.get('executable-entry')!.inputSchema).toMatchObject({ type: 'object' });
    expect(catalog.get('entry-missing')!.kind).toBe('instruction');
  });

  it('lint reports every finding with a precise rule and line', () => {
    const rules = catalog.lint.map((f) => `${folderOf(f)} ${f.rule} ${f.severity} ${f.line ?? '-'}`);
    expect(rules).toEqual(
      expect.arrayContaining([
        'main/unknown-fields unknown-field warning 4',
        'main/unknown-fields unknown-field warning 5',
        'main/long-description description-too-long error 3',
        'main/bad-name-format name-format error 2',
        'main/entry-missing entry-point-missing error 4',
        'main/compat-too-long compatibility-too-long error 4',
        'main/metadata-not-strings metadata-format error 4',
      ]),
    );
    expect(catalog.lint.filter((f) => f.severity === 'error')).toHaveLength(18);
    expect(catalog.lint.filter((f) => f.severity === 'warning')).toHaveLength(6);
  });
});

describe('catalog limits', () => {
  const t = tempDir();
  afterAll(t.cleanup);

  it('skips a SKILL.md over 1 MiB with rule too-large', () => {
    mkdirSync(join(t.dir, 'huge-skill-md'));
    writeFileSync(
      join(t.dir, 'huge-skill-md', 'SKILL.md'),
      `---\nname: huge-skill-md\ndescription: Big.\n---\n${'x'.repeat(2 * 1024 * 1024)}`,
    );
    const c = loadCatalog([t.dir]);
    expect(c.skills).toHaveLength(0);
    expect(c.findings.map((f) => f.rule)).toEqual(['too-large']);
  });

  it('skips a skill with more than 5,000 files', () => {
    const dir = join(t.dir, 'many');
    mkdirSync(join(dir, 'data'), { recursive: true });
    writeFileSync(join(dir, 'SKILL.md'), '---\nname: many\ndescription: Many files.\n---\n');
    for (let i = 0; i < 5001; i++) writeFileSync(join(dir, 'data', `f${i}.txt`), '');
    const c = loadCatalog([dir]);
    expect(c.skills).toHaveLength(0);
    expect(c.findings[0]!.rule).toBe('too-many-files');
    expect(c.findings[0]!.message).toContain('5000');
  });

  it('indexes the skill file with the size, mode and time lstat reports, linked or not', () => {
    const root = join(t.dir, 'index-root');
    for (const name of ['plain', 'linked']) mkdirSync(join(root, name, 'docs'), { recursive: true });
    writeFileSync(join(root, 'plain', 'SKILL.md'), '---\nname: plain\ndescription: Plain.\n---\nBody.\n');
    chmodSync(join(root, 'plain', 'SKILL.md'), 0o640);
    writeFileSync(join(root, 'linked', 'docs', 'real.md'), '---\nname: linked\ndescription: Linked.\n---\n');
    symlinkSync('docs/real.md', join(root, 'linked', 'SKILL.md'));
    // Subfolders without a skill file are not skills and are not reported.
    mkdirSync(join(root, 'not-a-skill'));
    writeFileSync(join(root, 'not-a-skill', 'README.md'), 'nothing here');
    const c = loadCatalog([root]);
    expect(c.skills.map((s) => s.name)).toEqual(['linked', 'plain']);
    expect(c.findings).toEqual([]);
    const plain = c.get('plain')!.files;
    const st = lstatSync(join(root, 'plain', 'SKILL.md'));
    expect(plain).toEqual([
      { path: 'SKILL.md', size: st.size, mode: 0o640, mtimeMs: st.mtimeMs, ctimeMs: st.ctimeMs, ino: st.ino },
    ]);
    // A link to a file inside the skill is listed at both paths, with the target's stats.
    const target = statSync(join(root, 'linked', 'docs', 'real.md'));
    expect(c.get('linked')!.files.map((f) => [f.path, f.size, f.mtimeMs])).toEqual([
      ['SKILL.md', target.size, target.mtimeMs],
      ['docs/real.md', target.size, target.mtimeMs],
    ]);
  });

  it('reports a skills root that does not exist', () => {
    const c = loadCatalog([join(t.dir, 'nope')]);
    expect(c.findings.map((f) => f.rule)).toEqual(['root-missing']);
  });
});
