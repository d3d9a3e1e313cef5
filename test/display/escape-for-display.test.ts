import { describe, expect, it } from 'vitest';
import { escapeForDisplay, quoteForDisplay } from '../../src/escape-for-display.js';

describe('escapeForDisplay', () => {
  it.each([
    ['ESC and CSI', '\x1b[2Jcleared', '\\x1B[2Jcleared'],
    ['OSC 52 clipboard write', '\x1b]52;c;ZXZpbA==\x07', '\\x1B]52;c;ZXZpbA==\\x07'],
    ['C1 CSI', 'a\u009b2Jb', 'a\\x9B2Jb'],
    ['DEL', 'a\x7fb', 'a\\x7Fb'],
    ['line feed forging a line', 'a\nFiles: x', 'a\\x0AFiles: x'],
    ['bidi override and isolate', 'evil\u202Etxt.exe\u2066', 'evil\\u202Etxt.exe\\u2066'],
    ['zero-width space, joiner, BOM', 'a\u200Bb\u200Dc\uFEFF', 'a\\u200Bb\\u200Dc\\uFEFF'],
    ['Unicode tags', 'hi\u{E0041}\u{E007F}', 'hi\\u{E0041}\\u{E007F}'],
    ['Hangul filler', 'name\u3164', 'name\\u3164'],
    ['interlinear annotation', '\uFFF9a\uFFFAb\uFFFB', '\\uFFF9a\\uFFFAb\\uFFFB'],
    ['line separator', 'a\u2028b', 'a\\u2028b'],
    ['private use (icon fonts draw anything there)', 'ok\uE000\u{F0000}', 'ok\\uE000\\u{F0000}'],
    ['unassigned and noncharacters', 'a\u0378b\uFFFE', 'a\\u0378b\\uFFFE'],
    ['combining mark with no letter', ' \u0301x', ' \\u0301x'],
    ['a third stacked mark', 'e\u0301\u0302\u0303', 'e\u0301\u0302\\u0303'],
    ['marks stacked on an underscore', `_${'\u035A'.repeat(3)}`, '_\\u035A\\u035A\\u035A'],
    ['the halfwidth Hangul filler and braille blank', 'a\uFFA0b\u2800', 'a\\uFFA0b\\u2800'],
    ['a zero-width joiner', 'a\u200Db', 'a\\u200Db'],
    ['variation selectors hiding bytes after an emoji', '🎉\uFE0F\u{E0101}', '🎉\\uFE0F\\u{E0101}'],
  ])('shows %s as code points', (_, input, shown) => {
    expect(escapeForDisplay(input)).toBe(shown);
  });

  it('leaves ordinary text, accents and other scripts as they are', () => {
    for (const s of ['csv-stats', 'café', 'cafe\u0301', 'नमस्ते', '日本語', 'a b/c.txt', 'emoji 🎉'])
      expect(escapeForDisplay(s)).toBe(s);
  });

  it('keeps line feeds and tabs in multiline text, and JSON valid in json mode', () => {
    expect(escapeForDisplay('a\n\tb\x1b', { multiline: true })).toBe('a\n\tb\\x1B');
    const json = JSON.stringify({ name: 'x\u202E\u{E0041}\u009b' });
    const shown = escapeForDisplay(json, { multiline: true, json: true });
    expect(shown).toMatch(/^[\x20-\x7e]*$/);
    expect(JSON.parse(shown)).toEqual(JSON.parse(json));
  });

  it('quotes a name as one JSON string that cannot start a line or pose as two entries', () => {
    expect(quoteForDisplay('a\nFiles: x, b\u202E')).toBe('"a\\nFiles: x, b\\u202E"');
  });
});
