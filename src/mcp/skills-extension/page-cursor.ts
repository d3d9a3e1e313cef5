import { ProtocolError, ProtocolErrorCode } from '@modelcontextprotocol/server';

/** Entries per skills/list page and per directory page. */
export const PAGE_SIZE = 100;

const encode = (key: string) => Buffer.from(`after:${key}`, 'utf8').toString('base64url');

/**
 * One page of `items` (sorted by `keyOf`, ascending) after the cursor. Cursors name the last key sent, so a page
 * boundary survives reloads that add or remove items. A cursor this server did not make is -32602.
 */
export function pageAfter<T>(
  items: readonly T[],
  keyOf: (item: T) => string,
  cursor: string | undefined,
  size = PAGE_SIZE,
): { items: T[]; nextCursor?: string } {
  let start = 0;
  if (cursor !== undefined) {
    const decoded = Buffer.from(cursor, 'base64url').toString('utf8');
    if (!decoded.startsWith('after:') || encode(decoded.slice(6)) !== cursor)
      throw new ProtocolError(ProtocolErrorCode.InvalidParams, 'Invalid cursor');
    const after = decoded.slice(6);
    start = items.findIndex((item) => keyOf(item) > after);
    if (start === -1) start = items.length;
  }
  const page = items.slice(start, start + size);
  const last = page.at(-1);
  return start + size < items.length && last !== undefined
    ? { items: page, nextCursor: encode(keyOf(last)) }
    : { items: page };
}
