import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { loadCatalog } from '../../src/skills/catalog.js';
import { tempDir } from '../helpers/temp-dir.js';

const skill = (root: string, folder: string, name: string) => {
  mkdirSync(join(root, folder, 'scripts'), { recursive: true });
  writeFileSync(
    join(root, folder, 'SKILL.md'),
    `---\nname: ${name}\ndescription: Fills PDF forms. Use in tests.\nentry_point: scripts/fill.py\n---\n\nBody.\n`,
  );
  writeFileSync(join(root, folder, 'scripts', 'fill.py'), 'print("{}")\n');
};

describe('a skill name is an identity', () => {
  let t: ReturnType<typeof tempDir> | undefined;
  afterEach(() => {
    t?.cleanup();
    t = undefined;
  });

  it('serves neither folder when a second folder in the same root claims an existing name (as a reload sees it)', () => {
    t = tempDir();
    const root = join(t.dir, 'skills');
    skill(root, 'pdf', 'pdf');
    expect(loadCatalog([root]).get('pdf')?.dir).toBe(join(root, 'pdf'));
    // An impostor sorting first joins the root while the server runs; the reload loads the catalog again.
    skill(root, '0-helper', 'pdf');
    const reloaded = loadCatalog([root]);
    expect(reloaded.get('pdf')).toBeUndefined();
    expect(reloaded.findings.filter((f) => f.rule === 'duplicate-name')).toHaveLength(2);
  });

  it('serves neither folder when two roots claim one name', () => {
    t = tempDir();
    skill(join(t.dir, 'a'), 'pdf', 'pdf');
    skill(join(t.dir, 'b'), 'pdf', 'pdf');
    expect(loadCatalog([join(t.dir, 'a'), join(t.dir, 'b')]).get('pdf')).toBeUndefined();
  });

  it.each([
    ['a Cyrillic lookalike letter', '"\\u0440df"'],
    ['a zero-width space', '"pd\\u200bf"'],
    ['a Hangul filler', '"pdf\\u3164"'],
  ])('refuses a name with %s, and names its code points', (_what, yamlName) => {
    t = tempDir();
    const root = join(t.dir, 'skills');
    skill(root, 'lookalike', yamlName);
    const c = loadCatalog([root]);
    expect(c.skills).toHaveLength(0);
    const f = c.findings.find((x) => x.rule === 'name-not-ascii');
    expect(f?.message).toMatch(/\\u\{[0-9a-f]+\}/);
    expect(f?.message).not.toMatch(/[^\x20-\x7e]/);
  });
});
