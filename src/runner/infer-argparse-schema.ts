import type { JsonSchemaObject } from '../skills/types.js';

/** One argparse argument, as read statically from the script text (the script is never executed). */
export interface ArgparseArg {
  /** JSON property name (argparse `dest`). */
  dest: string;
  /** `--long` option string, or undefined for a positional. */
  flag?: string;
  action?: 'store_true' | 'store_false' | 'store' | 'append' | 'count';
  nargs?: string;
}

export interface ArgparseSpec {
  schema: JsonSchemaObject;
  args: ArgparseArg[];
}

/** Splits the text inside `add_argument( … )` on top-level commas, honouring strings and brackets. */
function splitArgs(text: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let quote: string | undefined;
  let cur = '';
  for (let i = 0; i < text.length; i++) {
    const ch = text[i]!;
    if (quote !== undefined) {
      cur += ch;
      if (ch === '\\') cur += text[++i] ?? '';
      else if (ch === quote) quote = undefined;
      continue;
    }
    if (ch === '"' || ch === "'") quote = ch;
    else if ('([{'.includes(ch)) depth++;
    else if (')]}'.includes(ch)) depth--;
    if (ch === ',' && depth === 0) {
      parts.push(cur.trim());
      cur = '';
    } else cur += ch;
  }
  if (cur.trim() !== '') parts.push(cur.trim());
  return parts;
}

/** Finds each `add_argument(` call and returns its argument text. */
function calls(source: string): string[] {
  const out: string[] = [];
  const re = /\.add_argument\s*\(/g;
  for (let m = re.exec(source); m !== null; m = re.exec(source)) {
    let depth = 1;
    let quote: string | undefined;
    let i = m.index + m[0].length;
    const start = i;
    for (; i < source.length && depth > 0; i++) {
      const ch = source[i]!;
      if (quote !== undefined) {
        if (ch === '\\') i++;
        else if (ch === quote) quote = undefined;
      } else if (ch === '"' || ch === "'") quote = ch;
      else if (ch === '(') depth++;
      else if (ch === ')') depth--;
    }
    out.push(source.slice(start, i - 1));
  }
  return out;
}

const str = (lit: string): string | undefined => {
  const m = /^[rbu]?(["'])([\s\S]*)\1$/.exec(lit.trim());
  return m === null ? undefined : m[2]!.replace(/\\(["'\\])/g, '$1');
};

const literal = (v: string): unknown => {
  const s = str(v);
  if (s !== undefined) return s;
  if (v === 'True') return true;
  if (v === 'False') return false;
  if (v === 'None') return null;
  if (/^-?\d+$/.test(v)) return Number(v);
  if (/^-?\d*\.\d+$/.test(v)) return Number(v);
  if (/^[[(].*[\])]$/s.test(v)) return splitArgs(v.slice(1, -1)).filter(Boolean).map(literal);
  return undefined;
};

const TYPES: Record<string, string> = { int: 'integer', float: 'number', str: 'string', bool: 'boolean' };

/**
 * Infers a JSON Schema from a Python entry point's argparse calls: positionals, `--flag`, `type=`, `store_true`,
 * `nargs`, `choices`, `help`, `default`, `required`. Returns undefined when the script declares no arguments.
 */
export function inferArgparseSchema(source: string): ArgparseSpec | undefined {
  if (!/\bargparse\b/.test(source)) return undefined;
  const properties: Record<string, Record<string, unknown>> = {};
  const required: string[] = [];
  const args: ArgparseArg[] = [];
  for (const call of calls(source)) {
    const parts = splitArgs(call);
    const names = parts
      .filter((p) => !/^\w+\s*=/.test(p))
      .map(str)
      .filter((s): s is string => s !== undefined);
    const kw = Object.fromEntries(
      parts
        .filter((p) => /^\w+\s*=/.test(p))
        .map((p) => [p.slice(0, p.indexOf('=')).trim(), p.slice(p.indexOf('=') + 1).trim()]),
    );
    if (names.length === 0 || names.includes('-h') || names.includes('--help')) continue;
    const flag = names.find((n) => n.startsWith('--')) ?? names.find((n) => n.startsWith('-'));
    const dest = (str(kw.dest ?? '') ?? (flag ?? names[0]!).replace(/^-+/, '')).replace(/-/g, '_');
    const action = str(kw.action ?? '') as ArgparseArg['action'] | undefined;
    const nargs = kw.nargs === undefined ? undefined : String(literal(kw.nargs));
    const prop: Record<string, unknown> = {};
    const itemType = TYPES[kw.type ?? 'str'] ?? 'string';
    if (action === 'store_true' || action === 'store_false') {
      prop.type = 'boolean';
      prop.default = action === 'store_false';
    } else if (action === 'count') prop.type = 'integer';
    else if (
      nargs === '+' ||
      nargs === '*' ||
      action === 'append' ||
      (/^\d+$/.test(nargs ?? '') && nargs !== '1')
    ) {
      prop.type = 'array';
      prop.items = { type: itemType };
      if (nargs === '+') prop.minItems = 1;
    } else prop.type = itemType;
    const choices = kw.choices === undefined ? undefined : literal(kw.choices);
    if (Array.isArray(choices))
      (prop.type === 'array' ? (prop.items as Record<string, unknown>) : prop).enum = choices;
    const dflt = kw.default === undefined ? undefined : literal(kw.default);
    const help = str(kw.help ?? '');
    if (help !== undefined && help !== '')
      prop.description = help.replace(
        /%\(default\)s/g,
        typeof dflt === 'string' ? dflt : JSON.stringify(dflt ?? null),
      );
    if (dflt !== undefined && dflt !== null) prop.default = dflt;
    properties[dest] = prop;
    const isRequired = flag === undefined ? nargs !== '?' && nargs !== '*' : kw.required === 'True';
    if (isRequired) required.push(dest);
    args.push({
      dest,
      ...(flag === undefined ? {} : { flag }),
      ...(action === undefined ? {} : { action }),
      ...(nargs === undefined ? {} : { nargs }),
    });
  }
  if (args.length === 0) return undefined;
  return {
    schema: {
      type: 'object',
      properties,
      ...(required.length > 0 ? { required } : {}),
      additionalProperties: false,
    },
    args,
  };
}
