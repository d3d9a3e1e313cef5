import type pg from 'pg';
import { pgFailure } from './pg-failure.js';
import { PG_SCHEMA } from './pg-schema.js';

const PAGE = 1000;
const SELECT = `SELECT event_id::text AS event_id, ts::text AS ts, session_id, call_id, type, payload, prev_hash, hash
  FROM ${PG_SCHEMA}.audit_events e WHERE e.event_id > $1 ORDER BY e.event_id LIMIT ${PAGE}`;

/** A row with its bigint columns as numbers (text that is no whole number stays text, for the row check to refuse). */
export const asRow = (r: Record<string, unknown>): Record<string, unknown> => {
  const num = (v: unknown) => (typeof v === 'string' && /^-?\d+$/.test(v) ? Number(v) : v);
  return { ...r, event_id: num(r.event_id), ts: num(r.ts) };
};

/**
 * Every event row in chain order, from one snapshot (a REPEATABLE READ, READ ONLY transaction), a page at a time.
 * Rows are raw: the caller parses and judges them. Throws AUDIT_FAILED when the database cannot be read.
 */
export async function* readPgEvents(
  pool: pg.Pool,
  /** Runs first inside the snapshot: reads what must be seen together with the events. */
  before?: (client: pg.PoolClient) => Promise<void>,
): AsyncGenerator<Record<string, unknown>> {
  let client: pg.PoolClient;
  try {
    client = await pool.connect();
  } catch (err) {
    throw pgFailure('read the events', err);
  }
  let failed: unknown;
  let ended = false;
  try {
    await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
    await before?.(client);
    let after = '0';
    for (;;) {
      const { rows } = await client.query<Record<string, unknown>>(SELECT, [after]);
      for (const r of rows) yield asRow(r);
      if (rows.length < PAGE) break;
      after = String(rows.at(-1)!.event_id);
    }
    await client.query('COMMIT');
    ended = true;
  } catch (err) {
    failed = err;
    throw pgFailure('read the events', err);
  } finally {
    if (failed === undefined && !ended) {
      // Stopped early by the caller: end the snapshot before giving the connection back.
      await client.query('ROLLBACK').catch((err: unknown) => (failed = err));
    }
    client.release(failed === undefined ? undefined : true);
  }
}
