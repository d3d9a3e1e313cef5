import type { CallToolResult } from '@modelcontextprotocol/server';

interface Known {
  result: CallToolResult;
  json: string;
}

/**
 * Remembered results, found through the objects their structured content holds: the SDK validates a tool's result
 * into a copy before sending it, but the copy keeps those values themselves (they are `unknown` to its schema).
 * Weak: a result is forgotten with the skill view that holds it.
 */
const known = new WeakMap<object, Known>();

/**
 * Remembers the JSON of a result that is answered again and again unchanged (a skill's view, frozen and shared), so
 * the stdio transport can write it without serializing it again (see `knownResultJson`).
 */
export function rememberResultJson(result: CallToolResult): void {
  const entry: Known = { result, json: JSON.stringify(result) };
  for (const value of Object.values(result.structuredContent ?? {}) as unknown[]) {
    if (typeof value === 'object' && value !== null) known.set(value, entry);
  }
}

/**
 * The JSON of `result` when it is equal, value for value, to a remembered result; otherwise undefined (serialize it
 * as usual). Equality is checked in full, so a result that differs anywhere is never answered with another's text.
 */
export function knownResultJson(result: unknown): string | undefined {
  if (!isRecord(result) || !isRecord(result.structuredContent)) return undefined;
  for (const value of Object.values(result.structuredContent)) {
    const entry = typeof value === 'object' && value !== null ? known.get(value) : undefined;
    if (entry !== undefined) return sameJson(result, entry.result) ? entry.json : undefined;
  }
  return undefined;
}

const isRecord = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/** Whether `a` and `b` serialize to the same JSON value (keys in any order; undefined members left out). */
function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    return a.every((v, i) => sameJson(v, b[i]));
  }
  if (Array.isArray(b)) return false;
  const ra = a as Record<string, unknown>;
  const rb = b as Record<string, unknown>;
  const keys = Object.keys(ra).filter((k) => ra[k] !== undefined);
  if (keys.length !== Object.keys(rb).filter((k) => rb[k] !== undefined).length) return false;
  return keys.every((k) => sameJson(ra[k], rb[k]));
}
