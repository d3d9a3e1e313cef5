import type pg from 'pg';
import { isSkillsError } from '../../errors.js';
import { checkEventOrder } from '../check-event-order.js';
import { chainEvent } from '../chain-event.js';
import { GENESIS_HASH } from '../event-hash.js';
import { BEGIN, HEAD, prepare, readCallBook, type PgAppendInput, type Prepared } from './append-pg-events.js';
import { pgFailure } from './pg-failure.js';
import { PG_SCHEMA } from './pg-schema.js';

// Every row of the batch in one statement (one round trip under the chain lock), in chain order.
const INSERT_ALL = `INSERT INTO ${PG_SCHEMA}.audit_events
    (event_id, ts, session_id, call_id, type, payload, prev_hash, hash)
  SELECT event_id, ts, session_id, call_id, type, payload, prev_hash, hash
  FROM unnest($1::bigint[], $2::bigint[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[])
    WITH ORDINALITY AS r(event_id, ts, session_id, call_id, type, payload, prev_hash, hash, n)
  ORDER BY n`;

const asError = (e: unknown) => (e instanceof Error ? e : new Error(String(e)));

/**
 * Appends groups of events in one transaction holding the chain lock, each group all or nothing: a group refused
 * (invalid payload, or out of order for its session or call) is left out alone, the others are written. Resolves
 * once COMMIT returned (durable) with, per group, the error that refused it (undefined when written). Meant for the
 * records of read-only calls: each group a new call of an open session, so only the sessions' start and end and the
 * groups' own calls are read for the order check. Rejects with AUDIT_FAILED when the transaction fails: then none
 * is written.
 */
export async function appendPgGroups(
  pool: pg.Pool,
  groups: readonly (readonly PgAppendInput[])[],
): Promise<(Error | undefined)[]> {
  const errors: (Error | undefined)[] = groups.map(() => undefined);
  const ready: { at: number; events: Prepared[] }[] = [];
  groups.forEach((g, at) => {
    try {
      ready.push({ at, events: g.map(prepare) });
    } catch (e) {
      errors[at] = asError(e);
    }
  });
  if (ready.length === 0) return errors;
  let client: pg.PoolClient;
  try {
    client = await pool.connect();
  } catch (err) {
    throw pgFailure('append', err);
  }
  let committing = false;
  let broken: unknown;
  try {
    await client.query(BEGIN);
    const head = (await client.query<{ event_id: string | null; hash: string | null; now: string }>(HEAD))
      .rows[0]!;
    const all = ready.flatMap((r) => r.events);
    const book = await readCallBook(client, {
      sessions: [...new Set(all.map((p) => p.e.sessionId))],
      calls: [...new Set(all.flatMap((p) => (p.e.callId === null ? [] : [p.e.callId])))],
      whole: false,
    });
    let eventId = Number(head.event_id ?? 0);
    let prevHash = head.hash ?? GENESIS_HASH;
    const ts = Number(head.now);
    const cols: unknown[][] = [[], [], [], [], [], [], [], []];
    for (const { at, events } of ready) {
      // A group refused part-way has taught the book only about its own call (each group names a new one): the
      // others are checked as if it were not there.
      try {
        for (const { e, payload } of events) {
          checkEventOrder(e, payload, book);
          book.apply({ type: e.type, sessionId: e.sessionId, callId: e.callId, payload });
        }
      } catch (e) {
        errors[at] = asError(e);
        continue;
      }
      for (const { e, payload, json } of events) {
        const event = chainEvent(e, payload, { eventId: ++eventId, ts, prevHash }, json);
        [eventId, ts, e.sessionId, e.callId, e.type, json, prevHash, event.hash].forEach((v, i) =>
          cols[i]!.push(v),
        );
        prevHash = event.hash;
      }
    }
    if (cols[0]!.length === 0) {
      await client.query('ROLLBACK');
      return errors;
    }
    await client.query(INSERT_ALL, cols);
    committing = true;
    await client.query('COMMIT');
    return errors;
  } catch (err) {
    broken = err;
    if (!committing) await client.query('ROLLBACK').catch(() => undefined);
    const answered = typeof (err as { severity?: unknown }).severity === 'string';
    throw isSkillsError(err) ? err : pgFailure('append', err, { inDoubt: committing && !answered });
  } finally {
    client.release(broken === undefined ? undefined : true);
  }
}
