import type { SqliteDb } from './sqlite/sqlite-db.js';
import { newestCheckpoint } from './checkpoint.js';
import { createChainWalker } from './create-chain-walker.js';
import type { VerifyResult } from './types.js';

/** A point of the chain already verified: the walk resumes after it. */
export interface ChainPoint {
  eventId: number;
  hash: string;
}

/**
 * Walks the chain in one read snapshot and returns the first bad row (see `createChainWalker` for the checks). With
 * `from`, only the rows after that point are walked, and the point itself must still hold the same hash (an
 * incremental check). A pruned log is walked from its newest checkpoint (see `checkpoint.ts`). `head` (the last hash) is what the anchors record outside the database: the chain alone cannot
 * show truncation or a chain rewritten and re-hashed.
 */
export function verifyChain(db: SqliteDb, from?: ChainPoint, limit = Infinity): VerifyResult {
  // A pruned log starts after its newest checkpoint: the first remaining event must link to the checkpoint's hash.
  const cp = newestCheckpoint(db);
  const cut = cp === undefined ? undefined : { eventId: cp.through, hash: cp.hash };
  let start = from !== undefined && from.eventId > 0 ? from : undefined;
  if (cut !== undefined && (start === undefined || start.eventId <= cut.eventId)) {
    if (start?.eventId === cut.eventId && start.hash !== cut.hash)
      return createChainWalker(cut).fail(
        cut.eventId,
        'hash_mismatch',
        `event ${cut.eventId} changed since it was verified`,
      );
    start = cut;
  }
  if (cp !== undefined) {
    // The walk starts after the cut; a row behind it would be read by queries and exports yet never checked.
    const behind = db.prepare('SELECT MIN(event_id) AS id FROM events').get() as { id: number | null };
    if (behind.id !== null && behind.id <= cp.through)
      return createChainWalker(cut).fail(
        behind.id,
        'event_id_gap',
        `event ${behind.id} is behind checkpoint #${cp.seq} (events 1-${cp.through} were pruned): it was put back`,
      );
  }
  const walker = createChainWalker(start);
  if (start !== undefined && start !== cut) {
    const at = db.prepare('SELECT hash FROM events WHERE event_id = ?').get(start.eventId) as
      { hash: string } | undefined;
    if (at === undefined) return walker.fail(start.eventId, 'event_id_gap', `event ${start.eventId} is gone`);
    if (at.hash !== start.hash)
      return walker.fail(
        start.eventId,
        'hash_mismatch',
        `event ${start.eventId} changed since it was verified`,
      );
  }
  const rows = db.prepare('SELECT * FROM events WHERE event_id >= ? ORDER BY event_id');
  let walked = 0;
  for (const row of rows.iterate((start?.eventId ?? 0) + 1)) {
    const bad = walker.step(row);
    if (bad !== undefined) return bad;
    // With `limit`, a walk in steps: the point reached so far (`events`, `head`) is where the next one resumes.
    if (++walked >= limit) break;
  }
  return walker.done();
}
