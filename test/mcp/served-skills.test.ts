import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { servedSkills } from '../../src/mcp/skills-extension/served-skills.js';
import { loadCatalog } from '../../src/skills/catalog.js';
import { tempDir } from '../helpers/temp-dir.js';

const skill = (root: string, name: string, extra = '') => {
  mkdirSync(join(root, name), { recursive: true });
  writeFileSync(
    join(root, name, 'SKILL.md'),
    `---\nname: ${name}\ndescription: Test skill ${name}.\n${extra}---\n\nBody.\n`,
  );
  return join(root, name);
};

describe('which skills the Skills extension publishes', () => {
  let t: { dir: string; cleanup: () => void };
  beforeEach(() => (t = tempDir()));
  afterEach(() => t.cleanup());

  it('leaves out a skill over 512 files or 16 MiB, and one with a file resources/read would refuse', () => {
    const many = skill(t.dir, 'many-files');
    for (let i = 0; i < 512; i++) writeFileSync(join(many, `f${i}.txt`), 'x');
    const heavy = skill(t.dir, 'heavy-files');
    for (let i = 0; i < 4; i++) writeFileSync(join(heavy, `part${i}.bin`), Buffer.alloc(4 * 1024 * 1024 + 1));
    const big = skill(t.dir, 'one-big-file');
    writeFileSync(join(big, 'data.bin'), Buffer.alloc(6 * 1024 * 1024));
    skill(t.dir, 'just-right');
    const s = servedSkills(loadCatalog([t.dir]));
    expect(s.skills.map((x) => x.name)).toEqual(['just-right']);
    expect(Object.fromEntries(s.leftOut.map((l) => [l.skill.name, l.reason]))).toEqual({
      'heavy-files': expect.stringContaining("over the extension's limits"),
      'many-files': expect.stringContaining('513 files'),
      'one-big-file': expect.stringContaining('data.bin is larger than resources/read serves'),
    });
  });

  it('publishes a symlink to a file inside the skill as that file, and leaves out links that escape', () => {
    const dir = skill(t.dir, 'linked');
    writeFileSync(join(dir, 'real.md'), 'real\n');
    symlinkSync('real.md', join(dir, 'alias.md'));
    writeFileSync(join(t.dir, 'outside.txt'), 'secret\n');
    symlinkSync('../outside.txt', join(dir, 'escape.txt'));
    const s = servedSkills(loadCatalog([t.dir]));
    expect(s.skills[0]!.files.map((f) => f.path)).toEqual(['SKILL.md', 'alias.md', 'real.md']);
  });

  it('leaves out names that break the name rule and non-JSON frontmatter values', () => {
    skill(t.dir, 'double--hyphen');
    skill(t.dir, 'infinite', 'version: .inf\n');
    const s = servedSkills(loadCatalog([t.dir]));
    expect(s.skills).toEqual([]);
    expect(s.leftOut.map((l) => l.reason)).toEqual([
      expect.stringContaining("breaks the extension's name rule"),
      expect.stringContaining('JSON cannot carry'),
    ]);
  });
});
