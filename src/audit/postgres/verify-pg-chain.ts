import type pg from 'pg';
import { createChainWalker } from '../create-chain-walker.js';
import type { VerifyResult } from '../types.js';
import { PG_SCHEMA } from './pg-schema.js';
import { readPgEvents } from './read-pg-events.js';

const LAST_COPY = `SELECT record FROM ${PG_SCHEMA}.anchor_copies ORDER BY seq DESC LIMIT 1`;

/** The chain check of a PostgreSQL log, and each event's hash (index 0 is event 1), for checks against anchors. */
export interface PgVerifyResult {
  chain: VerifyResult;
  hashes: string[];
  /** The newest anchor copy (its JSON line), read in the same snapshot; undefined when none was written. */
  lastAnchor: string | undefined;
}

/**
 * Walks the whole chain from one snapshot and names the first bad row: the same checks as the SQLite store's
 * `verify` (ids 1, 2, 3, …, `prev_hash` links, canonical payloads, recomputed hashes). Throws AUDIT_FAILED when the
 * database cannot be read. Like any chain, it cannot show the newest events removed: check the anchors
 * (`anchorPgLog`) with `hashes` and `lastAnchor`.
 */
export async function verifyPgChain(pool: pg.Pool): Promise<PgVerifyResult> {
  const walker = createChainWalker();
  const hashes: string[] = [];
  let lastAnchor: string | undefined;
  const readCopy = async (c: pg.PoolClient) => {
    lastAnchor = (await c.query<{ record: string }>(LAST_COPY)).rows[0]?.record;
  };
  for await (const row of readPgEvents(pool, readCopy)) {
    const bad = walker.step(row);
    if (bad !== undefined) return { chain: bad, hashes, lastAnchor };
    hashes.push(row.hash as string);
  }
  return { chain: walker.done(), hashes, lastAnchor };
}
