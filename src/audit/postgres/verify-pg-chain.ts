import type pg from 'pg';
import { createChainWalker } from '../create-chain-walker.js';
import type { VerifyResult } from '../types.js';
import { readPgEvents } from './read-pg-events.js';

/** The chain check of a PostgreSQL log, and each event's hash (index 0 is event 1), for checks against anchors. */
export interface PgVerifyResult {
  chain: VerifyResult;
  hashes: string[];
}

/**
 * Walks the whole chain from one snapshot and names the first bad row: the same checks as the SQLite store's
 * `verify` (ids 1, 2, 3, …, `prev_hash` links, canonical payloads, recomputed hashes). Throws AUDIT_FAILED when the
 * database cannot be read. Like any chain, it cannot show the newest events removed: compare `head` with a record
 * kept elsewhere.
 */
export async function verifyPgChain(pool: pg.Pool): Promise<PgVerifyResult> {
  const walker = createChainWalker();
  const hashes: string[] = [];
  for await (const row of readPgEvents(pool)) {
    const bad = walker.step(row);
    if (bad !== undefined) return { chain: bad, hashes };
    hashes.push(row.hash as string);
  }
  return { chain: walker.done(), hashes };
}
