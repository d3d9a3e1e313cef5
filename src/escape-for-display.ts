/**
 * Makes a string a script or a skill author controls safe to show to a person, on a terminal or in a title:
 * every character that could act on the terminal or hide or reorder what is shown is replaced by its code point
 * (`\x1B`, `\u202E`, `\u{E0041}`), so what the person reads is what the bytes are.
 *
 * Shown as code points: C0 and C1 controls and DEL (ESC, CSI, OSC and the rest start there), format characters
 * (bidi embeddings, overrides and isolates, zero-width space/joiners, word joiner, BOM, soft hyphen, Unicode tags
 * U+E0000–E007F, interlinear annotations U+FFF9–FFFB), line and paragraph separators, lone surrogates, private-use
 * and unassigned code points (a font or a later Unicode may draw them as anything, or as nothing), the blank
 * "filler" letters (U+115F, U+1160, U+3164, U+FFA0) and the braille blank U+2800, variation selectors (a run of
 * them after an emoji can carry a hidden message), and combining marks that are
 * not attached to a letter or stack beyond two (a mark at the start or after a space or symbol, or a third one
 * in a row), which can overdraw neighbouring text. `multiline` keeps line feeds and tabs as they are; `json`
 * writes every escape as `\uXXXX` (a surrogate pair above U+FFFF), so escaped JSON text is still the same JSON.
 */
export function escapeForDisplay(text: string, opts: { multiline?: boolean; json?: boolean } = {}): string {
  // Printable ASCII (and, multiline, line feeds and tabs) has nothing to escape: most names and titles.
  if ((opts.multiline === true ? PLAIN_MULTILINE : PLAIN).test(text)) return text;
  const codePoint = opts.json === true ? jsonEscape : readableEscape;
  let out = '';
  let marks = 0;
  let afterLetter = false;
  for (const ch of text) {
    const cp = ch.codePointAt(0)!;
    if (opts.multiline === true && (ch === '\n' || ch === '\t')) {
      out += ch;
      marks = 0;
      afterLetter = false;
      continue;
    }
    if (isSelector(cp)) {
      out += codePoint(cp);
      continue;
    }
    if (MARK.test(ch)) {
      marks++;
      out += afterLetter && marks <= 2 ? ch : codePoint(cp);
      continue;
    }
    marks = 0;
    if (UNSAFE.test(ch) || FILLERS.has(cp)) {
      out += codePoint(cp);
      afterLetter = false;
      continue;
    }
    out += ch;
    afterLetter = LETTER.test(ch);
  }
  return out;
}

/**
 * A string a model, a script or a skill author chose, shown as one JSON string: quoted, every control, bidi or
 * invisible character escaped, so it can never start a line of its own, pose as two entries or hide part of itself.
 */
export function quoteForDisplay(text: string): string {
  return escapeForDisplay(JSON.stringify(text), { json: true });
}

const PLAIN = /^[\x20-\x7e]*$/;
const PLAIN_MULTILINE = /^[\x20-\x7e\n\t]*$/;
const UNSAFE = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Cs}\p{Co}\p{Cn}]/u;
const MARK = /\p{M}/u;
const LETTER = /[\p{L}\p{N}]/u;
const FILLERS = new Set([0x115f, 0x1160, 0x3164, 0xffa0, 0x2800]);
/** Variation selectors draw nothing of their own, and a run of them after any character can carry hidden data. */
const isSelector = (cp: number): boolean =>
  (cp >= 0xfe00 && cp <= 0xfe0f) || (cp >= 0xe0100 && cp <= 0xe01ef) || (cp >= 0x180b && cp <= 0x180f);

const u4 = (n: number) => `\\u${n.toString(16).toUpperCase().padStart(4, '0')}`;

function jsonEscape(cp: number): string {
  if (cp < 0x10000) return u4(cp);
  const v = cp - 0x10000;
  return u4(0xd800 + (v >> 10)) + u4(0xdc00 + (v & 0x3ff));
}

function readableEscape(cp: number): string {
  if (cp < 0x100) return `\\x${cp.toString(16).toUpperCase().padStart(2, '0')}`;
  if (cp < 0x10000) return `\\u${cp.toString(16).toUpperCase().padStart(4, '0')}`;
  return `\\u{${cp.toString(16).toUpperCase()}}`;
}
