/**
 * A fast path for the frontmatter most skills have: `key: text` lines, quoted values without escapes, and one-level
 * maps such as `metadata:` with indented `key: text` lines. It accepts only input whose meaning is unambiguous — every
 * value a scalar that the YAML 1.2 core schema reads as a string — and returns undefined for anything else, which then
 * goes to the full YAML parser. Tests check that it agrees with the `yaml` package on every input it accepts.
 */
const KEY = /^[A-Za-z_][A-Za-z0-9_-]*$/;
/** Characters that start a non-plain or special scalar, or a YAML indicator. */
const SPECIAL_START = /^[-?:,[\]{}#&*!|>'"%@`]/;
/** Could resolve to a number, bool, null, timestamp… in some schema: leave it to the real parser. */
const MAYBE_TYPED = /^(?:[-+.~0-9]|(?:true|false|yes|no|on|off|null|y|n)$)/i;
// eslint-disable-next-line no-control-regex -- control characters are exactly what this must catch
const ODD = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u2028\u2029\ufeff\t]/;
const QUOTED = /^(?:"([^"\\]*)"|'([^']*)')$/;

/** A scalar that is certainly a string, or undefined. */
function scalar(value: string): string | undefined {
  const q = QUOTED.exec(value);
  if (q !== null) return q[1] ?? q[2];
  if (value === '' || SPECIAL_START.test(value) || MAYBE_TYPED.test(value)) return undefined;
  if (value.includes(': ') || value.includes(' #') || value.endsWith(':')) return undefined;
  return value;
}

/** Splits `key: value` (or `key:`); undefined when the line is not that shape. */
function entry(line: string): [string, string] | undefined {
  const colon = line.indexOf(':');
  if (colon <= 0) return undefined;
  const key = line.slice(0, colon);
  const rest = line.slice(colon + 1);
  if (!KEY.test(key) || key === '__proto__' || (rest !== '' && !rest.startsWith(' '))) return undefined;
  return [key, rest.trim()];
}

export function parseFlatYaml(raw: string): Record<string, string | Record<string, string>> | undefined {
  if (ODD.test(raw)) return undefined;
  const out = new Map<string, string | Map<string, string>>();
  let nested: Map<string, string> | undefined;
  for (const line of raw.split('\n')) {
    if (line.trim() === '') continue;
    if (line.startsWith(' ')) {
      // A child of the last `key:` line: exactly two spaces, then `key: value`.
      if (nested === undefined || !line.startsWith('  ') || line.startsWith('   ')) return undefined;
      const e = entry(line.slice(2));
      const v = e === undefined ? undefined : scalar(e[1]);
      if (e === undefined || v === undefined || nested.has(e[0])) return undefined;
      nested.set(e[0], v);
      continue;
    }
    if (nested !== undefined && nested.size === 0) return undefined;
    nested = undefined;
    const e = entry(line);
    if (e === undefined || out.has(e[0])) return undefined;
    if (e[1] === '') {
      nested = new Map();
      out.set(e[0], nested);
      continue;
    }
    const v = scalar(e[1]);
    if (v === undefined) return undefined;
    out.set(e[0], v);
  }
  if (nested !== undefined && nested.size === 0) return undefined;
  return Object.fromEntries([...out].map(([k, v]) => [k, typeof v === 'string' ? v : Object.fromEntries(v)]));
}
