import { chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { hashBundle } from '../../src/skills/bundle-hash.js';
import { checkRelativePath } from '../../src/skills/resolve-skill-path.js';
import { toolNameFor } from '../../src/skills/tool-name.js';
import { tempDir } from '../helpers/temp-dir.js';

describe('checkRelativePath', () => {
  it.each([
    ['SKILL.md', 'SKILL.md'],
    ['references/guide.md', 'references/guide.md'],
    ['./references//guide.md', 'references/guide.md'],
    ['references\\guide.md', 'references/guide.md'],
  ])('accepts %s as %s', (input, out) => {
    expect(checkRelativePath(input)).toBe(out);
  });

  it.each([
    ['', 'PATH_INVALID'],
    ['/etc/passwd', 'PATH_INVALID'],
    ['\\\\server\\share', 'PATH_INVALID'],
    ['C:\\Windows', 'PATH_INVALID'],
    ['a\0b', 'PATH_INVALID'],
    ['.', 'PATH_INVALID'],
    ['../x', 'PATH_OUTSIDE_SKILL'],
    ['references/../../x', 'PATH_OUTSIDE_SKILL'],
    ['references\\..\\..\\x', 'PATH_OUTSIDE_SKILL'],
  ])('refuses %j with %s', (input, code) => {
    expect(() => checkRelativePath(input)).toThrow(expect.objectContaining({ code }));
  });
});

describe('toolNameFor', () => {
  it('keeps spec-conforming names as they are', () => {
    expect(toolNameFor('csv-stats')).toBe('csv-stats');
  });

  it('sanitizes characters hosts reject and is deterministic', () => {
    const n = toolNameFor('my.skill name');
    expect(n).toMatch(/^my-skill-name-[0-9a-f]{8}$/);
    expect(toolNameFor('my.skill name')).toBe(n);
  });

  it('shortens names over 40 characters to a prefix plus a hash', () => {
    const long = 'a-very-long-skill-name-that-goes-on-and-on-forever';
    const n = toolNameFor(long);
    expect(n.length).toBeLessThanOrEqual(40);
    expect(n).toMatch(/^a-very-long-skill-name-that-goe-[0-9a-f]{8}$/);
    expect(toolNameFor(`${long}-2`)).not.toBe(n);
  });
});

describe('hashBundle', () => {
  const t = tempDir();
  afterAll(t.cleanup);

  it('changes when a file, its mode or the file set changes, and not otherwise', () => {
    const dir = join(t.dir, 's');
    mkdirSync(join(dir, 'scripts'), { recursive: true });
    writeFileSync(join(dir, 'SKILL.md'), '---\nname: s\ndescription: d\n---\n');
    writeFileSync(join(dir, 'scripts', 'main.py'), 'print(1)\n');
    const a = hashBundle(dir);
    expect(a.sha256).toMatch(/^[0-9a-f]{64}$/);
    expect(hashBundle(dir).sha256).toBe(a.sha256);
    expect(a.entries.map((e) => e.path)).toEqual(['SKILL.md', 'scripts/main.py']);
    writeFileSync(join(dir, 'scripts', 'main.py'), 'print(2)\n');
    const b = hashBundle(dir);
    expect(b.sha256).not.toBe(a.sha256);
    chmodSync(join(dir, 'scripts', 'main.py'), 0o755);
    const c = hashBundle(dir);
    expect(c.sha256).not.toBe(b.sha256);
    writeFileSync(join(dir, 'extra.txt'), '');
    expect(hashBundle(dir).sha256).not.toBe(c.sha256);
  });
});
