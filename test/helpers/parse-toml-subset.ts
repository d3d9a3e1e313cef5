/**
 * A strict parser for the part of TOML 1.0 a Codex `config.toml` entry uses: comments, `[dotted.table]` headers,
 * `key = value` with basic strings, booleans, integers, arrays and inline tables of those. Anything outside that subset,
 * or anything TOML forbids in it (raw control characters in a string, a key defined twice), throws.
 */
type Value = string | number | boolean | Value[] | { [k: string]: Value };
type Table = { [k: string]: Value };

const BARE_KEY = /^[A-Za-z0-9_-]+/;

class Cursor {
  constructor(
    readonly text: string,
    public at = 0,
  ) {}
  fail(what: string): never {
    throw new Error(`TOML: ${what} at ${JSON.stringify(this.text.slice(this.at, this.at + 20))}`);
  }
  spaces() {
    while (this.text[this.at] === ' ' || this.text[this.at] === '\t') this.at++;
  }
  eat(s: string) {
    if (!this.text.startsWith(s, this.at)) this.fail(`expected ${s}`);
    this.at += s.length;
  }
}

// eslint-disable-next-line no-control-regex -- the control characters TOML forbids raw in a basic string (tab is allowed)
const FORBIDDEN = /[\u0000-\u0008\u000a-\u001f\u007f]/;

const ESCAPES: Record<string, string> = { b: '\b', t: '\t', n: '\n', f: '\f', r: '\r', '"': '"', '\\': '\\' };

function basicString(c: Cursor): string {
  c.eat('"');
  let out = '';
  for (;;) {
    const ch = c.text[c.at];
    if (ch === undefined || ch === '\n') c.fail('unterminated string');
    c.at++;
    if (ch === '"') return out;
    if (ch === '\\') {
      const e = c.text[c.at++] ?? '';
      if (e === 'u' || e === 'U') {
        const hex = c.text.slice(c.at, c.at + (e === 'u' ? 4 : 8));
        if (!/^[0-9A-Fa-f]+$/.test(hex) || hex.length !== (e === 'u' ? 4 : 8)) c.fail('bad unicode escape');
        out += String.fromCodePoint(parseInt(hex, 16));
        c.at += hex.length;
      } else if (ESCAPES[e] !== undefined) out += ESCAPES[e];
      else c.fail(`bad escape \\${e}`);
    } else if (FORBIDDEN.test(ch)) c.fail('raw control character in a string');
    else out += ch;
  }
}

function key(c: Cursor): string {
  if (c.text[c.at] === '"') return basicString(c);
  const m = BARE_KEY.exec(c.text.slice(c.at));
  if (m === null) c.fail('expected a key');
  c.at += m[0].length;
  return m[0];
}

function dottedKey(c: Cursor): string[] {
  const parts = [key(c)];
  for (;;) {
    c.spaces();
    if (c.text[c.at] !== '.') return parts;
    c.at++;
    c.spaces();
    parts.push(key(c));
  }
}

function value(c: Cursor): Value {
  const ch = c.text[c.at];
  if (ch === '"') return basicString(c);
  if (ch === '[') {
    c.at++;
    const items: Value[] = [];
    for (;;) {
      c.spaces();
      if (c.text[c.at] === ']') break;
      items.push(value(c));
      c.spaces();
      if (c.text[c.at] === ',') c.at++;
      else if (c.text[c.at] !== ']') c.fail('expected , or ]');
    }
    c.at++;
    return items;
  }
  if (ch === '{') {
    c.at++;
    const t: Table = {};
    c.spaces();
    if (c.text[c.at] === '}') return (c.at++, t);
    for (;;) {
      c.spaces();
      assign(t, dottedKey(c), (c.spaces(), c.eat('='), c.spaces(), value(c)), c);
      c.spaces();
      if (c.text[c.at] === '}') return (c.at++, t);
      c.eat(',');
    }
  }
  const m = /^(true|false|[+-]?(0|[1-9][0-9]*))/.exec(c.text.slice(c.at));
  if (m === null) c.fail('unsupported value');
  c.at += m[0].length;
  return m[0] === 'true' ? true : m[0] === 'false' ? false : Number(m[0]);
}

function tableAt(root: Table, path: string[], c: Cursor): Table {
  let t = root;
  for (const p of path) {
    const next = (t[p] ??= {});
    if (typeof next !== 'object' || Array.isArray(next)) c.fail(`${p} is not a table`);
    t = next;
  }
  return t;
}

function assign(t: Table, path: string[], v: Value, c: Cursor) {
  const last = path[path.length - 1]!;
  const into = tableAt(t, path.slice(0, -1), c);
  if (last in into) c.fail(`${path.join('.')} defined twice`);
  into[last] = v;
}

export function parseTomlSubset(text: string): Table {
  const root: Table = {};
  const defined = new Set<string>();
  let current = root;
  for (const [i, line] of text.split('\n').entries()) {
    const c = new Cursor(line);
    c.spaces();
    if (c.at === line.length || line[c.at] === '#') continue;
    try {
      if (line[c.at] === '[') {
        c.at++;
        c.spaces();
        const path = dottedKey(c);
        c.eat(']');
        const name = JSON.stringify(path);
        if (defined.has(name)) c.fail(`table [${path.join('.')}] defined twice`);
        defined.add(name);
        current = tableAt(root, path, c);
      } else {
        const path = dottedKey(c);
        c.spaces();
        c.eat('=');
        c.spaces();
        assign(current, path, value(c), c);
      }
      c.spaces();
      if (c.at < line.length && line[c.at] !== '#') c.fail('trailing text');
    } catch (err) {
      throw new Error(`line ${i + 1}: ${(err as Error).message}`);
    }
  }
  return root;
}
