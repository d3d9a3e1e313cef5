/**
 * How values a model sent are shown to a person: short, one line, invisible/bidi characters escaped, and
 * never anything that looks like a secret.
 */

export const SECRET_NAME = /token|secret|pass|key|auth|cookie|credential/i;

/** Longest string value shown in clear. */
export const MAX_SHOWN_CHARS = 40;

const TOKEN_PREFIX =
  /^(?:sk-|sk_|pk_|rk_|ghp_|gho_|ghu_|ghs_|github_pat_|glpat-|xox[abposr]-|AKIA|ASIA|AIza|eyJ)/;
const UNSAFE_CHARS =
  // eslint-disable-next-line no-control-regex -- finding control characters is the point
  /[\u0000-\u001f\u007f-\u009f\u00ad\u061c\u180e\u200b-\u200f\u2028-\u202e\u2060-\u206f\ufeff]/g;

/** Escapes control, zero-width and bidi characters so a value cannot rearrange or hide text on screen. */
export function escapeInvisible(text: string): string {
  return text.replace(UNSAFE_CHARS, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/** A string that looks like a credential: known token prefixes, PEM blocks, or a long random-looking run. */
export function looksSecret(value: string): boolean {
  if (TOKEN_PREFIX.test(value) || value.includes('-----BEGIN')) return true;
  if (/^[a-z][a-z0-9+.-]*:\/\/[^/\s:@]+:[^/\s@]+@/i.test(value)) return true;
  const compact = /^[A-Za-z0-9+/=_-]{20,}$/.test(value);
  return compact && /[0-9]/.test(value) && /[A-Za-z]/.test(value);
}

/**
 * One value for the approval screen: primitives in clear when short and not secret-looking; strings that
 * are long, secret-looking or under a secret-looking name are hidden; arrays and objects are summarized.
 */
export function displayValue(name: string, value: unknown): string {
  if (SECRET_NAME.test(name)) return '(hidden: secret-looking name)';
  if (value === null || typeof value === 'boolean') return String(value);
  if (typeof value === 'number')
    return String(value).length <= MAX_SHOWN_CHARS ? String(value) : '(long number)';
  if (typeof value === 'string') {
    if (value.length > MAX_SHOWN_CHARS) return `(hidden: ${value.length} characters)`;
    if (looksSecret(value)) return '(hidden: secret-looking value)';
    return escapeInvisible(JSON.stringify(value));
  }
  if (Array.isArray(value)) return `(list of ${value.length})`;
  if (typeof value === 'object') return `(object with ${Object.keys(value).length} keys)`;
  return '(not shown)';
}

/** A name (input key) shown in one line, clipped. */
export function displayName(name: string): string {
  const clipped = name.length > MAX_SHOWN_CHARS ? `${name.slice(0, MAX_SHOWN_CHARS - 3)}...` : name;
  return escapeInvisible(/^[\w.-]+$/.test(clipped) ? clipped : JSON.stringify(clipped));
}

/**
 * argv for the approval screen: items that are long or secret-looking are hidden, as are values given to a
 * secret-looking flag (`--token X`, `--password=X`).
 */
export function displayArgv(argv: readonly string[]): string {
  const shown = argv.map((arg, i) => {
    const prev = argv[i - 1];
    if (prev !== undefined && /^-{1,2}[\w-]+$/.test(prev) && SECRET_NAME.test(prev)) return '(hidden)';
    const eq = /^(-{1,2}[\w-]+)=/.exec(arg);
    if (eq?.[1] !== undefined && SECRET_NAME.test(eq[1])) return `${eq[1]}=(hidden)`;
    if (arg.length > 80) return `(${arg.length} characters, hidden)`;
    if (looksSecret(arg)) return '(hidden)';
    return /^[\w@%+=:,./-]+$/.test(arg) ? arg : escapeInvisible(JSON.stringify(arg));
  });
  return shown.join(' ');
}
