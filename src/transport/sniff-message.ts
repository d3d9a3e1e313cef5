export type RequestId = string | number;

/** What the first and last bytes of a JSON-RPC message (the middle was never kept) tell about it. */
export interface MessageSniff {
  /** Its top-level `id`, or null when neither end shows it. */
  id: RequestId | null;
  /** True when the first bytes show a response (`result` or `error` before any `method`): nothing to answer. */
  isResponse: boolean;
}

/**
 * Reads what it can of a message known only by its ends. Clients put `id` either first
 * (`{"jsonrpc":"2.0","id":7,"method":…}`) or last (`{"method":…,"params":{…},"jsonrpc":"2.0","id":7}`, as the
 * TypeScript SDK does), so both ends are read.
 */
export function sniffMessage(head: Buffer, tail: Buffer): MessageSniff {
  const fromHead = readHead(head.toString('utf8'));
  return {
    id: fromHead.id ?? idFromTail(tail.toString('utf8')) ?? null,
    isResponse: fromHead.kind === 'response',
  };
}

const WS = new Set([' ', '\t', '\r', '\n']);
const NUMBER = /^-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?$/;

const skipWs = (s: string, i: number) => {
  while (i < s.length && WS.has(s[i]!)) i++;
  return i;
};

/** Index just past the string starting at `i` (a '"'), or -1 when it does not end within `s`. */
function stringEnd(s: string, i: number): number {
  for (let j = i + 1; j < s.length; j++) {
    if (s[j] === '\\') j++;
    else if (s[j] === '"') return j + 1;
  }
  return -1;
}

/** Index just past the value starting at `i`, or -1 when it does not end within `s`. */
function valueEnd(s: string, i: number): number {
  if (s[i] === '"') return stringEnd(s, i);
  if (s[i] === '{' || s[i] === '[') {
    let depth = 0;
    for (let j = i; j < s.length; j++) {
      const c = s[j];
      if (c === '"') {
        j = stringEnd(s, j) - 1;
        if (j < 0) return -1;
      } else if (c === '{' || c === '[') depth++;
      else if (c === '}' || c === ']') if (--depth === 0) return j + 1;
    }
    return -1;
  }
  let j = i;
  while (j < s.length && !WS.has(s[j]!) && s[j] !== ',' && s[j] !== '}' && s[j] !== ']') j++;
  return j < s.length ? j : -1;
}

/** A string or number id from its JSON text; undefined for anything else. */
function parseId(token: string): RequestId | undefined {
  if (token.startsWith('"')) {
    try {
      return JSON.parse(token) as string;
    } catch {
      return undefined;
    }
  }
  return NUMBER.test(token) ? Number(token) : undefined;
}

/** Walks the top-level members from the start, skipping values, until the known bytes run out. */
function readHead(s: string): { id?: RequestId; kind?: 'request' | 'response' } {
  const found: { id?: RequestId; kind?: 'request' | 'response' } = {};
  let i = skipWs(s, 0);
  if (s[i] !== '{') return found;
  i++;
  for (;;) {
    i = skipWs(s, i);
    if (s[i] !== '"') return found;
    const keyEnd = stringEnd(s, i);
    if (keyEnd < 0) return found;
    const key = parseId(s.slice(i, keyEnd));
    if (found.kind === undefined && key === 'method') found.kind = 'request';
    if (found.kind === undefined && (key === 'result' || key === 'error')) found.kind = 'response';
    i = skipWs(s, keyEnd);
    if (s[i] !== ':') return found;
    i = skipWs(s, i + 1);
    const end = valueEnd(s, i);
    if (end < 0) return found;
    if (key === 'id') {
      const id = parseId(s.slice(i, end));
      if (id !== undefined) found.id = id;
    }
    i = skipWs(s, end);
    if (s[i] !== ',') return found;
    i++;
  }
}

/** Start of the string whose closing quote is at `j`: the nearest '"' before it not escaped by a backslash. */
function stringStartBack(s: string, j: number): number {
  for (let k = j - 1; k >= 0; k--) {
    if (s[k] !== '"') continue;
    let slashes = 0;
    while (k - 1 - slashes >= 0 && s[k - 1 - slashes] === '\\') slashes++;
    if (slashes % 2 === 0) return k;
  }
  return -1;
}

/** Reads the last member of the top-level object backwards: `…,"id":<value>}`. */
function idFromTail(s: string): RequestId | undefined {
  let j = s.length - 1;
  while (j >= 0 && WS.has(s[j]!)) j--;
  if (s[j] !== '}') return undefined;
  j--;
  while (j >= 0 && WS.has(s[j]!)) j--;
  let valueStart: number;
  if (s[j] === '"') valueStart = stringStartBack(s, j);
  else for (valueStart = j; valueStart > 0 && /[-+.\deE]/.test(s[valueStart - 1]!);) valueStart--;
  if (valueStart < 0) return undefined;
  const value = parseId(s.slice(valueStart, j + 1));
  j = valueStart - 1;
  while (j >= 0 && WS.has(s[j]!)) j--;
  if (s[j] !== ':') return undefined;
  j--;
  while (j >= 0 && WS.has(s[j]!)) j--;
  if (s[j] !== '"') return undefined;
  const keyStart = stringStartBack(s, j);
  if (keyStart < 0 || parseId(s.slice(keyStart, j + 1)) !== 'id') return undefined;
  j = keyStart - 1;
  while (j >= 0 && WS.has(s[j]!)) j--;
  return s[j] === ',' || s[j] === '{' ? value : undefined;
}
