import { escapeForDisplay } from '../escape-for-display.js';
import { canonicalInput, sha256Hex } from '../gate/approval-key.js';

/**
 * How values a model sent are shown to a person: every invisible, bidi or stacking character escaped (see
 * `escapeForDisplay`). A short value is shown in full on its line. A long one is shortened there (its start, length
 * and a sha256 prefix) and carries its full text as escaped lines, for the screen to show below the facts when it has
 * room. A value whose name the operator listed as secret (`approval.secret_names`) is hidden: its length only.
 */

/** Longest value shown in full on its own line, counted after escaping. */
export const MAX_SHOWN_CHARS = 80;
/** How much of a long value its shortened line shows, counted after escaping. */
const HEAD_CHARS = 60;

/** The full text of a long value: what it is (`278 characters, 9 lines, sha256 …`) and its lines, escaped. */
export interface LongValue {
  facts: string;
  lines: string[];
}

/**
 * A value as the approval screen shows it. `full`: shown in full on its line. Else `long` holds the full text for the
 * screen to show elsewhere; without `long` (a secret) the value is hidden.
 */
export interface Shown {
  text: string;
  full: boolean;
  long?: LongValue;
}

/** Whether an input key or a command-line flag names a secret. */
export type IsSecretName = (name: string) => boolean;

/** A string as a JSON string, every invisible, bidi or stacking character shown as its code point. */
const quote = (value: string): string => escapeForDisplay(JSON.stringify(value));

const normalName = (name: string): string => name.replace(/^-+/, '').toLowerCase().replaceAll('-', '_');

/**
 * Whole-name matching against the operator's list: case, leading dashes and `-` versus `_` do not matter, so
 * `--API-KEY` is `api_key`; but `keywords` is not `key` and `passport` is not `pass`.
 */
export function secretNameMatcher(names: readonly string[]): IsSecretName {
  const set = new Set(names.map(normalName));
  return (name) => set.has(normalName(name));
}

const chars = (n: number): string => (n === 1 ? '1 character' : `${n} characters`);
const digest = (text: string): string => `sha256 ${sha256Hex(text).slice(0, 12)}`;
const secret = (value: string): Shown => ({ text: `(secret, ${chars(value.length)}, hidden)`, full: false });

/** The start of a long text, as JSON without its closing quote, cut between characters, never inside an escape. */
function head(json: string, escape: (s: string) => string): string {
  let out = '';
  for (const ch of json) {
    const next = out + escape(ch);
    if (next.length > HEAD_CHARS) break;
    out = next;
  }
  return `${out}…`;
}

/** A string's lines, escaped, and a last line saying whether it ends with a line break (else that cannot be seen). */
function stringLines(value: string): { lines: string[]; count: number } {
  const parts = value.split('\n');
  const endsWithBreak = parts.length > 1 && parts.at(-1) === '';
  if (endsWithBreak) parts.pop();
  const lines = parts.map((l) => `| ${escapeForDisplay(l)}`);
  lines.push(endsWithBreak ? '(ends with a line break)' : '(no line break at the end)');
  return { lines, count: parts.length };
}

/** A string in full when its escaped form is short, else its start, with its full text as lines. */
function shownString(value: string): Shown {
  const text = quote(value);
  if (text.length <= MAX_SHOWN_CHARS) return { text, full: true };
  const { lines, count } = stringLines(value);
  const facts = `${chars(value.length)}, ${count === 1 ? '1 line' : `${count} lines`}, ${digest(value)}`;
  return { text: head(JSON.stringify(value), escapeForDisplay), full: false, long: { facts, lines } };
}

/** The first key, at any depth, that names a secret. */
function secretKeyIn(value: unknown, isSecret: IsSecretName, depth = 0): string | undefined {
  if (typeof value !== 'object' || value === null || depth > 64) return undefined;
  for (const [k, v] of Object.entries(value)) {
    if (!Array.isArray(value) && isSecret(k)) return k;
    const inner = secretKeyIn(v, isSecret, depth + 1);
    if (inner !== undefined) return inner;
  }
  return undefined;
}

/** One input value: in full, escaped, when short; a list or object as its JSON when short, else summarized. */
export function displayValue(name: string, value: unknown, isSecret: IsSecretName): Shown {
  if (isSecret(name)) return secret(typeof value === 'string' ? value : (JSON.stringify(value) ?? ''));
  if (typeof value === 'string') return shownString(value);
  if (value === null || typeof value === 'boolean' || typeof value === 'number') {
    const text = String(value);
    return text.length <= MAX_SHOWN_CHARS
      ? { text, full: true }
      : {
          text: head(text, (c) => c),
          full: false,
          long: { facts: `a number of ${text.length} digits, ${digest(text)}`, lines: [`| ${text}`] },
        };
  }
  if (typeof value !== 'object') return { text: '(not JSON)', full: false };
  const what = Array.isArray(value)
    ? `list of ${value.length}`
    : `object with ${Object.keys(value).length} keys`;
  const inner = secretKeyIn(value, isSecret);
  if (inner !== undefined)
    return { text: `(${what}, holds secret "${normalName(inner)}", hidden)`, full: false };
  const json = canonicalInput(value);
  const text = escapeForDisplay(json);
  if (text.length <= MAX_SHOWN_CHARS) return { text, full: true };
  // Shown below as indented JSON; the digest is of the canonical JSON (the bytes the approval key hashes).
  const lines = JSON.stringify(value, null, 2)
    .split('\n')
    .map((l) => `| ${escapeForDisplay(l)}`);
  return {
    text: head(json, escapeForDisplay),
    full: false,
    long: { facts: `${what}, ${chars(json.length)} as JSON, ${digest(json)}`, lines },
  };
}

/** An input key shown in one line, escaped; a long one is clipped (the value line still counts it). */
export function displayName(name: string): string {
  const clipped = name.length > MAX_SHOWN_CHARS ? `${name.slice(0, MAX_SHOWN_CHARS - 3)}...` : name;
  return /^[\w.-]+$/.test(clipped) ? clipped : quote(clipped);
}

const FLAG = /^-{1,2}[\w-]+$/;

/**
 * argv for the approval screen, one {@link Shown} per argument: in full (escaped, quoted unless plain), except
 * values given to a secret flag (`--token X`, `--password=X`), hidden, and long arguments, shortened.
 */
export function displayArgv(argv: readonly string[], isSecret: IsSecretName): Shown[] {
  return argv.map((arg, i) => {
    const prev = argv[i - 1];
    if (prev !== undefined && FLAG.test(prev) && isSecret(prev)) return secret(arg);
    const eq = /^(-{1,2}[\w-]+)=/.exec(arg);
    if (eq?.[1] !== undefined && isSecret(eq[1]))
      return { text: `${eq[1]}=${secret(arg.slice(eq[0].length)).text}`, full: false };
    if (/^[\w@%+=:,./-]+$/.test(arg) && arg.length <= MAX_SHOWN_CHARS) return { text: arg, full: true };
    return shownString(arg);
  });
}
