import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseSkillFile, parseSkillHead } from '../../src/skills/parse-skill-file.js';
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

/** What the catalog takes from a parse: everything but the body. */
const withoutBody = (o: ReturnType<typeof parseSkillFile>) =>
  o.ok ? { ok: true, parsed: { ...o.parsed, body: '' } } : o;

describe('parsing only the head of a SKILL.md', () => {
  it('gives the full parse without its body for every bundled and fixture skill', () => {
    const files = [
      ...skillFiles(join(repoRoot, 'skills')),
      ...skillFiles(join(repoRoot, 'test', 'fixtures', 'roots')),
    ];
    expect(files.length).toBeGreaterThan(20);
    for (const f of files) {
      const bytes = readFileSync(f);
      expect(parseSkillHead(bytes, f), f).toEqual(withoutBody(parseSkillFile(bytes, f)));
    }
  });

  it('agrees with the full parse on closing lines, BOMs, CRs, bad UTF-8 and NUL bytes (seeded fuzz, 5,000 files)', () => {
    const rand = rng(7);
    const pieces = [
      '---',
      '---\n',
      '\n---\n',
      '\n--- \n',
      '\n---\t\n',
      '\n----\n',
      '\n--- x\n',
      '\n---',
      'name: a\n',
      'description: "b: c"\n',
      'metadata:\n  k: v\n',
      'list:\n  - x\n',
      'é',
      '日本',
      '\r\n',
      '\r',
      '\uFEFF',
      '# body\n',
      'yaml\n',
      'js\n',
      ' ',
      '\t',
    ];
    const oddBytes = [
      Buffer.from([0xff]),
      Buffer.from([0xc3]),
      Buffer.from([0]),
      Buffer.from([0xef, 0xbb, 0xbf]),
    ];
    for (let i = 0; i < 5000; i++) {
      const parts: Buffer[] = [Buffer.from(rand() < 0.8 ? '---' : '')];
      const n = 1 + Math.floor(rand() * 12);
      for (let k = 0; k < n; k++) {
        parts.push(
          rand() < 0.03
            ? oddBytes[Math.floor(rand() * oddBytes.length)]!
            : Buffer.from(pieces[Math.floor(rand() * pieces.length)]!),
        );
      }
      const bytes = Buffer.concat(parts);
      expect(parseSkillHead(bytes, 'x/SKILL.md'), JSON.stringify(bytes.toString('latin1'))).toEqual(
        withoutBody(parseSkillFile(bytes, 'x/SKILL.md')),
      );
    }
  });
});
