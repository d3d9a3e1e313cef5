import type { Database } from 'better-sqlite3';
import { canonicalJson } from '../canonical-json.js';
import { isSkillsError } from '../errors.js';
import { GENESIS_HASH, eventHash } from './event-hash.js';
import { parseRawEventRow } from './parse-event-row.js';
import type { VerifyResult } from './types.js';

/** A point of the chain already verified: the walk resumes after it. */
export interface ChainPoint {
  eventId: number;
  hash: string;
}

/**
 * Walks the chain in one read snapshot and returns the first bad row. Checks, per row: the row is well formed, ids
 * run 1, 2, 3, …, `prev_hash` equals the previous row's `hash`, the stored payload is canonical JSON, and `hash` is
 * the recomputed digest. With `from`, only the rows after that point are walked, and the point itself must still
 * hold the same hash (an incremental check). `head` (the last hash) is what the anchors record outside the
 * database: the chain alone cannot show truncation or a chain rewritten and re-hashed.
 */
export function verifyChain(db: Database, from?: ChainPoint): VerifyResult {
  let prev = GENESIS_HASH;
  let expectedId = 1;
  let events = 0;
  const bad = (badEventId: number, reason: Extract<VerifyResult, { ok: false }>['reason'], detail: string) =>
    ({ ok: false, events, badEventId, reason, detail }) as const;

  if (from !== undefined && from.eventId > 0) {
    const at = db.prepare('SELECT hash FROM events WHERE event_id = ?').get(from.eventId) as
      { hash: string } | undefined;
    if (at === undefined) return bad(from.eventId, 'event_id_gap', `event ${from.eventId} is gone`);
    if (at.hash !== from.hash)
      return bad(from.eventId, 'hash_mismatch', `event ${from.eventId} changed since it was verified`);
    prev = from.hash;
    expectedId = from.eventId + 1;
    events = from.eventId;
  }
  const rows = db.prepare('SELECT * FROM events WHERE event_id >= ? ORDER BY event_id');
  for (const row of rows.iterate(expectedId)) {
    const id = (row as { event_id: number }).event_id;
    let e;
    try {
      e = parseRawEventRow(row);
    } catch (err) {
      return bad(id, 'malformed_row', isSkillsError(err) ? err.message : String(err));
    }
    if (e.event_id !== expectedId)
      return bad(id, 'event_id_gap', `expected event ${expectedId}, found ${id}`);
    if (e.prev_hash !== prev)
      return bad(id, 'prev_hash_mismatch', 'prev_hash is not the previous event’s hash');
    let canonical: string;
    try {
      canonical = canonicalJson(e.payload);
    } catch (err) {
      return bad(id, 'malformed_row', isSkillsError(err) ? err.message : String(err));
    }
    if (canonical !== (row as { payload: string }).payload) {
      return bad(id, 'not_canonical', 'stored payload is not in canonical form');
    }
    if (eventHash(prev, e) !== e.hash)
      return bad(id, 'hash_mismatch', 'hash does not match the event’s content');
    prev = e.hash;
    expectedId++;
    events++;
  }
  return { ok: true, events, head: events === 0 ? null : prev };
}
