import type { Database } from 'better-sqlite3';
import { canonicalJson } from '../canonical-json.js';
import { isSkillsError } from '../errors.js';
import { GENESIS_HASH, eventHash } from './event-hash.js';
import { parseRawEventRow } from './parse-event-row.js';
import type { VerifyResult } from './types.js';

/**
 * Walks the whole chain in one read snapshot and returns the first bad row. Checks, per row: the row is well
 * formed, ids run 1, 2, 3, …, `prev_hash` equals the previous row's `hash`, the stored payload is canonical JSON,
 * and `hash` is the recomputed digest. `head` (the last hash) is what an operator records elsewhere to detect
 * truncation or a rewritten chain: the chain alone cannot show those.
 */
export function verifyChain(db: Database): VerifyResult {
  let prev = GENESIS_HASH;
  let expectedId = 1;
  let events = 0;
  const bad = (badEventId: number, reason: Extract<VerifyResult, { ok: false }>['reason'], detail: string) =>
    ({ ok: false, events, badEventId, reason, detail }) as const;

  for (const row of db.prepare('SELECT * FROM events ORDER BY event_id').iterate()) {
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
