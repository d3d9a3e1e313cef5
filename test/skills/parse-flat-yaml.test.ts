import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { describe, expect, it } from 'vitest';
import { parseFlatYaml } from '../../src/skills/parse-flat-yaml.js';
import { parseSkillFile, parseWithGrayMatter } from '../../src/skills/parse-skill-file.js';
import { repoRoot } from '../helpers/temp-dir.js';

function skillFiles(dir: string, out: string[] = []): string[] {
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p, { throwIfNoEntry: false })?.isDirectory()) skillFiles(p, out);
    else if (/^skill\.md$/i.test(name)) out.push(p);
  }
  return out;
}

/** A tiny seeded PRNG so the fuzz corpus is the same on every run. */
function rng(seed: number) {
  return () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
}

describe('the flat frontmatter fast path', () => {
  it('reads quoted values and one-level maps as the yaml package does', () => {
    const raw =
      '\nname: pdf\ndescription: "Fill forms: fast, # not a comment"\nlicense: MIT\nmetadata:\n  author: someone\n  version: \'1.0\'\n';
    expect(parseFlatYaml(raw)).toEqual(parseYaml(raw));
    expect(parseFlatYaml(raw)).toMatchObject({ metadata: { author: 'someone', version: '1.0' } });
  });

  it('agrees with the yaml package on every value it accepts (seeded fuzz, 20,000 inputs)', () => {
    const rand = rng(42);
    const alphabet = [
      'a',
      'b',
      'Z',
      '0',
      '9',
      ' ',
      ':',
      '#',
      '-',
      "'",
      '"',
      '[',
      ']',
      '{',
      '}',
      ',',
      '&',
      '*',
      '!',
      '|',
      '>',
      '%',
      '@',
      '`',
      '.',
      '~',
      '?',
      'é',
      '\\',
      '/',
      'true',
      'null',
      'No',
      '0x1',
      '1e3',
      ': ',
      ' #',
    ];
    let accepted = 0;
    const value = () => {
      let v = '';
      const len = Math.floor(rand() * 8);
      for (let j = 0; j < len; j++) v += alphabet[Math.floor(rand() * alphabet.length)];
      const wrap = rand();
      return wrap < 0.15 ? `"${v}"` : wrap < 0.25 ? `'${v}'` : v;
    };
    for (let n = 0; n < 20_000; n++) {
      const lines: string[] = [];
      const count = 1 + Math.floor(rand() * 3);
      for (let i = 0; i < count; i++) {
        const key = ['name', 'description', 'k-1', 'x_y'][i]!;
        if (rand() < 0.2) {
          lines.push(`${key}:`);
          const children = Math.floor(rand() * 3);
          for (let c = 0; c < children; c++)
            lines.push(`${rand() < 0.1 ? ' ' : '  '}${['a', 'b-c', 'd_e'][c]}: ${value()}`);
        } else lines.push(`${key}: ${value()}`);
      }
      const raw = `\n${lines.join('\n')}\n`;
      const fast = parseFlatYaml(raw);
      if (fast === undefined) continue;
      accepted++;
      expect(fast, JSON.stringify(raw)).toEqual(parseYaml(raw));
    }
    expect(accepted).toBeGreaterThan(1000);
  });

  it('gives the same frontmatter, body and body line as gray-matter for every bundled and fixture skill', () => {
    const files = [
      ...skillFiles(join(repoRoot, 'skills')),
      ...skillFiles(join(repoRoot, 'test', 'fixtures', 'roots')),
    ];
    let fast = 0;
    for (const f of files) {
      const bytes = readFileSync(f);
      const a = parseSkillFile(bytes, f);
      if (!a.ok) continue;
      const text = bytes
        .toString('utf8')
        .replace(/^\uFEFF/, '')
        .replace(/\r\n?/g, '\n');
      const b = parseWithGrayMatter(text, () => {
        throw new Error(`full parser refused ${f}`);
      });
      if (!b.ok) throw new Error('unreachable');
      expect(a.parsed.frontmatter, f).toEqual(b.parsed.frontmatter);
      expect(a.parsed.body, f).toBe(b.parsed.body);
      expect(a.parsed.bodyLine, f).toBe(b.parsed.bodyLine);
      if (parseFlatYaml(a.parsed.rawFrontmatter) !== undefined) fast++;
    }
    expect(fast).toBeGreaterThan(5);
  });

  it.each([
    ['a map nested two levels', '\nname: x\nmetadata:\n  a:\n    b: c\n'],
    ['an empty map', '\nname: x\nmetadata:\n'],
    ['a quoted value with an escape', '\nname: "x\\ty"\n'],
    ['a number', '\nversion: 2\n'],
    ['a boolean word', '\nnetwork: yes\n'],
    ['a comment line', '\n# note\nname: x\n'],
    ['a trailing comment', '\nname: x # note\n'],
    ['a duplicate key', '\nname: x\nname: y\n'],
    ['a block scalar', '\ndescription: >\n  text\n'],
    ['a tab', '\nname:\tx\n'],
  ])('leaves %s to the full parser', (_what, raw) => {
    expect(parseFlatYaml(raw)).toBeUndefined();
  });
});
