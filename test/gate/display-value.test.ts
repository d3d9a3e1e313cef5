import { describe, expect, it } from 'vitest';
import { DEFAULT_SECRET_NAMES } from '../../src/config/approval-schema.js';
import { displayArgv, displayValue, secretNameMatcher } from '../../src/approvals/display-value.js';

const isSecret = secretNameMatcher(DEFAULT_SECRET_NAMES);
/** Text that hides from a person: each must show as code points, never as itself. */
const tags = (s: string) => [...s].map((c) => String.fromCodePoint(0xe0000 + c.codePointAt(0)!)).join('');

describe('the approval screen shows what the model sent', () => {
  it('shows tag-encoded text after a file name as code points, not as "report.txt"', () => {
    const shown = displayValue('file', `report.txt${tags('rm')}`, isSecret);
    expect(shown).toEqual({ text: '"report.txt\\u{E0072}\\u{E006D}"', full: true });
  });

  it('shortens a long value and keeps its full text, with length and digest', () => {
    expect(displayValue('note', `${'x'.repeat(99)}\n`, isSecret)).toEqual({
      text: `"${'x'.repeat(59)}…`,
      full: false,
      long: {
        facts: expect.stringMatching(/^100 characters, 1 line, sha256 [0-9a-f]{12}$/) as string,
        lines: [`| ${'x'.repeat(99)}`, '(ends with a line break)'],
      },
    });
  });

  it('counts a value that only escaping makes long as not shown in full', () => {
    expect(displayValue('name', `_${'\u035a'.repeat(30)}`, isSecret).full).toBe(false);
  });

  it('matches secret names whole, ignoring case, dashes and "-" versus "_"', () => {
    for (const name of ['password', 'PASSWORD', '--password', '-token', '--api-key', 'API_KEY'])
      expect(isSecret(name)).toBe(true);
    for (const name of ['keywords', 'passport', 'author', 'monkey', 'tokens', '--pass', 'key'])
      expect(isSecret(name)).toBe(false);
  });

  it('shows "--password \'rm -rf ~\'" as a hidden secret of 8 characters, counted', () => {
    expect(displayArgv(['--password', 'rm -rf ~'], isSecret)).toEqual([
      { text: '--password', full: true },
      { text: '(secret, 8 characters, hidden)', full: false },
    ]);
  });

  it('keeps combining marks in argv from stacking over the lines below', () => {
    const argv = Array.from({ length: 3 }, () => `_${'\u035a'.repeat(79)}`);
    const shown = displayArgv(argv, isSecret);
    for (const s of shown) {
      expect(s.text).not.toMatch(/\p{M}/u);
      for (const l of s.long?.lines ?? []) expect(l).not.toMatch(/\p{M}{3}/u);
    }
    expect(shown.every((s) => !s.full)).toBe(true);
  });
});
