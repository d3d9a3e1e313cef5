import { canonicalJson } from '../canonical-json.js';
import { isSkillsError } from '../errors.js';
import { GENESIS_HASH, eventHash } from './event-hash.js';
import { parseRawEventRow } from './parse-event-row.js';
import type { VerifyResult } from './types.js';

type Failure = Extract<VerifyResult, { ok: false }>;

/** Checks chain rows one at a time, in event order; the first bad row ends the walk. */
export interface ChainWalker {
  /** Checks the next row (raw, as the database returned it); returns the failure, or undefined when it holds. */
  step(row: unknown): Failure | undefined;
  /** A failure that is not about one row's content (e.g. a verified point that is gone). */
  fail(badEventId: number, reason: Failure['reason'], detail: string): Failure;
  /** The result once every row was stepped through. */
  done(): VerifyResult;
}

/**
 * Per row: well formed, ids run 1, 2, 3, … (from `after`), `prev_hash` equals the previous row's `hash`, the stored
 * payload is canonical JSON and `hash` is the recomputed digest. Shared by every store's `verify`.
 */
export function createChainWalker(after?: { eventId: number; hash: string }): ChainWalker {
  let prev = after?.hash ?? GENESIS_HASH;
  let expectedId = (after?.eventId ?? 0) + 1;
  let events = after?.eventId ?? 0;
  const fail = (badEventId: number, reason: Failure['reason'], detail: string): Failure => ({
    ok: false,
    events,
    badEventId,
    reason,
    detail,
  });
  return {
    fail,
    step(row) {
      const id = (row as { event_id: number }).event_id;
      let e;
      try {
        e = parseRawEventRow(row);
      } catch (err) {
        return fail(id, 'malformed_row', isSkillsError(err) ? err.message : String(err));
      }
      if (e.event_id !== expectedId)
        return fail(id, 'event_id_gap', `expected event ${expectedId}, found ${id}`);
      if (e.prev_hash !== prev)
        return fail(id, 'prev_hash_mismatch', 'prev_hash is not the previous event’s hash');
      let canonical: string;
      try {
        canonical = canonicalJson(e.payload);
      } catch (err) {
        return fail(id, 'malformed_row', isSkillsError(err) ? err.message : String(err));
      }
      if (canonical !== (row as { payload: string }).payload)
        return fail(id, 'not_canonical', 'stored payload is not in canonical form');
      if (eventHash(prev, e, canonical) !== e.hash)
        return fail(id, 'hash_mismatch', 'hash does not match the event’s content');
      prev = e.hash;
      expectedId++;
      events++;
      return undefined;
    },
    done: () => ({ ok: true, events, head: events === 0 ? null : prev }),
  };
}
