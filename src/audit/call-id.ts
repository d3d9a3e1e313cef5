import { randomFillSync } from 'node:crypto';

/** Random bytes for 16 ids, drawn at once: one call into the CSPRNG per 16 ids instead of one per id. */
let pool: Buffer | undefined;
let used = 0;

/**
 * A new call id: a UUID of version 7 (RFC 9562), the time in milliseconds in its first 48 bits, then 74 random bits.
 * Ids made later sort after earlier ones, so the audit log's indexes keyed by call id (the `calls` table, the events
 * of a call, approvals, artifacts) take each new call at their right edge, a page that is already in memory, instead
 * of a random page of an index that grows with the log. The random bits keep ids unguessable and unique.
 */
export function newCallId(now: number = Date.now()): string {
  if (pool === undefined || used === pool.length) {
    pool = randomFillSync(pool ?? Buffer.alloc(256));
    used = 0;
  }
  const b = pool.subarray(used, used + 16);
  used += 16;
  b.writeUIntBE(Math.max(0, Math.min(now, 2 ** 48 - 1)), 0, 6);
  b[6] = (b[6]! & 0x0f) | 0x70;
  b[8] = (b[8]! & 0x3f) | 0x80;
  const h = b.toString('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

/**
 * How lists show a call id: its last eight characters. A call id's first characters are its time (ids made within the
 * same 65.5 s share eight of them), its last ones random; an id of any other shape (older logs, ids a test chose) is
 * shown the same way.
 */
export const shortCallId = (callId: string): string => callId.slice(-8);
