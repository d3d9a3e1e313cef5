import { createHash } from 'node:crypto';

/**
 * Text the model chooses (input key names, a requested script path) as the audit log keeps it: short, plain
 * names verbatim; anything else as `#` + 32 hex digits of its sha256, so a value smuggled into a key name (a
 * secret, a newline that forges a row in a listing, a 100 kB name) never reaches the log, yet equal names still
 * give equal digests. Idempotent: a digest is kept as it is.
 */
const DIGESTED = /^#[0-9a-f]{32}$/;
const SAFE_KEY = /^[A-Za-z_][A-Za-z0-9_-]{0,31}$/;
const SAFE_PATH = /^[A-Za-z0-9_][A-Za-z0-9_. +-]*(?:\/[A-Za-z0-9_][A-Za-z0-9_. +-]*)*$/;

/** At most this many key names are kept per request (the first ones, in sorted order); the rest are counted. */
export const MAX_AUDIT_KEYS = 64;

const digest = (text: string) => `#${createHash('sha256').update(text, 'utf8').digest('hex').slice(0, 32)}`;

/** A key name kept as it is only when it is a plain identifier of up to 32 characters. */
export const auditKeyName = (key: string): string =>
  SAFE_KEY.test(key) || DIGESTED.test(key) ? key : digest(key);

/** A relative path kept as it is only when it is plain (letters, digits, space, `_.+-`, `/`) and at most 256 characters. */
export const auditPath = (path: string): string =>
  DIGESTED.test(path) || (path.length <= 256 && SAFE_PATH.test(path) && !path.split('/').includes('..'))
    ? path
    : digest(path);

/** Key names as kept: mapped, unique, sorted, at most `MAX_AUDIT_KEYS`, with the number left out. */
export function auditKeyNames(
  keys: readonly string[],
  omittedBefore = 0,
): { kept: string[]; omitted: number } {
  const all = [...new Set(keys.map(auditKeyName))].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  return {
    kept: all.slice(0, MAX_AUDIT_KEYS),
    omitted: omittedBefore + Math.max(0, all.length - MAX_AUDIT_KEYS),
  };
}
