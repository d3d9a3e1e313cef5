import { escapeForDisplay } from '../escape-for-display.js';
import { canonicalInput, sha256Hex } from './approval-key.js';

/**
 * How values a model sent are shown to a person: one line, every invisible, bidi or stacking character escaped
 * (see `escapeForDisplay`). A value is shown in full unless its name is one the operator listed as secret
 * (`approval.secret_names`) or it is long; then it is marked with its length (and, when not secret, a sha256
 * prefix) and counted as not shown, so the screen can say so.
 */

/** Longest value shown in full, counted after escaping. */
export const MAX_SHOWN_CHARS = 80;

/** A value as the approval screen shows it; `full` is false when it is hidden or summarized. */
export interface Shown {
  text: string;
  full: boolean;
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

/** A string in full when its escaped form is short, else its length and digest. */
function shownString(value: string): Shown {
  const text = quote(value);
  return text.length <= MAX_SHOWN_CHARS
    ? { text, full: true }
    : { text: `(${chars(value.length)}, ${digest(value)})`, full: false };
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
      : { text: `(long number, ${digest(text)})`, full: false };
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
  return text.length <= MAX_SHOWN_CHARS
    ? { text, full: true }
    : { text: `(${what}, ${chars(json.length)}, ${digest(json)})`, full: false };
}

/** An input key shown in one line, escaped; a long one is clipped (the value line still counts it). */
export function displayName(name: string): string {
  const clipped = name.length > MAX_SHOWN_CHARS ? `${name.slice(0, MAX_SHOWN_CHARS - 3)}...` : name;
  return /^[\w.-]+$/.test(clipped) ? clipped : quote(clipped);
}

const FLAG = /^-{1,2}[\w-]+$/;

/**
 * argv for the approval screen: every argument in full (escaped, quoted unless plain), except values given to a
 * secret flag (`--token X`, `--password=X`) and long arguments. `hidden` counts those.
 */
export function displayArgv(
  argv: readonly string[],
  isSecret: IsSecretName,
): { text: string; hidden: number } {
  let hidden = 0;
  const shown = argv.map((arg, i) => {
    const prev = argv[i - 1];
    if (prev !== undefined && FLAG.test(prev) && isSecret(prev)) {
      hidden++;
      return secret(arg).text;
    }
    const eq = /^(-{1,2}[\w-]+)=/.exec(arg);
    if (eq?.[1] !== undefined && isSecret(eq[1])) {
      hidden++;
      return `${eq[1]}=${secret(arg.slice(eq[0].length)).text}`;
    }
    if (/^[\w@%+=:,./-]+$/.test(arg) && arg.length <= MAX_SHOWN_CHARS) return arg;
    const s = shownString(arg);
    if (!s.full) hidden++;
    return s.text;
  });
  return { text: shown.join(' '), hidden };
}
