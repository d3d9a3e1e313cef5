/**
 * A fast path for the frontmatter most skills have: flat `key: plain text` lines. It accepts only input whose
 * meaning is unambiguous — every value a plain YAML scalar that the YAML 1.2 core schema reads as a string — and
 * returns undefined for anything else, which then goes to the full YAML parser. Tests check that it agrees with
 * the `yaml` package on every input it accepts.
 */
const KEY = /^[A-Za-z_][A-Za-z0-9_-]*$/;
/** Characters that start a non-plain or special scalar, or a YAML indicator. */
const SPECIAL_START = /^[-?:,[\]{}#&*!|>'"%@`]/;
/** Could resolve to a number, bool, null, timestamp… in some schema: leave it to the real parser. */
const MAYBE_TYPED = /^(?:[-+.~0-9]|(?:true|false|yes|no|on|off|null|y|n)$)/i;
// eslint-disable-next-line no-control-regex -- control characters are exactly what this must catch
const ODD = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u2028\u2029\ufeff\t]/;

export function parseFlatYaml(raw: string): Record<string, string> | undefined {
  const out = new Map<string, string>();
  if (ODD.test(raw)) return undefined;
  for (const line of raw.split('\n')) {
    if (line.trim() === '') continue;
    const colon = line.indexOf(': ');
    if (colon <= 0) return undefined;
    const key = line.slice(0, colon);
    if (!KEY.test(key) || key === '__proto__' || out.has(key)) return undefined;
    const value = line.slice(colon + 2).trim();
    if (value === '' || SPECIAL_START.test(value) || MAYBE_TYPED.test(value)) return undefined;
    if (value.includes(': ') || value.includes(' #') || value.endsWith(':')) return undefined;
    out.set(key, value);
  }
  return Object.fromEntries(out);
}
