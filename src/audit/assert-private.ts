import { SkillsError } from '../errors.js';

/**
 * Key names that say "this holds a raw value". Such a key may only hold null or a sha256 digest; use
 * `<name>_sha256`, `<name>_bytes`, `<name>_keys` for anything else. Our own payload keys (`input_sha256`,
 * `env_keys`, `stdout_bytes`, …) end in a suffix that is not on this list.
 */
const RAW_VALUE_KEY =
  /(?:^|[_-])(?:env|environ|environment|input|inputs|value|values|secret|secrets|token|tokens|password|passwd|passphrase|credential|credentials|api_?key|auth|authorization|cookie|content|contents|body|stdin|stdout|stderr|output|data)$/i;
const SHA256 = /^[0-9a-f]{64}$/;

/**
 * Refuses a payload holding raw data under a key named like a value (`env`, `input`, `secret`, `token`, …),
 * at any depth. Fails closed with AUDIT_FAILED naming the key path (never the value).
 */
export function assertPrivate(payload: unknown, at = 'payload'): void {
  if (Array.isArray(payload)) {
    payload.forEach((v, i) => assertPrivate(v, `${at}[${i}]`));
    return;
  }
  if (payload === null || typeof payload !== 'object') return;
  for (const [key, value] of Object.entries(payload as Record<string, unknown>)) {
    const path = `${at}.${key}`;
    if (RAW_VALUE_KEY.test(key) && !(value === null || (typeof value === 'string' && SHA256.test(value)))) {
      throw new SkillsError('AUDIT_FAILED', `refusing to store raw data under ${path}`, {
        hint: 'Audit payloads hold hashes, sizes and key names only: store <name>_sha256 / <name>_bytes instead.',
        details: { path },
      });
    }
    assertPrivate(value, path);
  }
}
