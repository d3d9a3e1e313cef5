import type pg from 'pg';
import { randomUUID } from 'node:crypto';
import { canonicalJson } from '../../canonical-json.js';
import { isSkillsError } from '../../errors.js';
import { checkEventInput, refused, type PendingEvent } from '../check-event-input.js';
import { chainEvent } from '../chain-event.js';
import { GENESIS_HASH } from '../event-hash.js';
import type { AuditEvent } from '../types.js';
import { pgFailure } from './pg-failure.js';
import { CHAIN_LOCK, PG_SCHEMA } from './pg-schema.js';

/** An event to append; `callId` may be left out for `tool_call_requested` (a new one is made). */
export type PgAppendInput = Omit<PendingEvent, 'callId'> & { callId?: string | null };

const HEAD = `
  SELECT h.event_id::text AS event_id, h.hash, floor(extract(epoch FROM clock_timestamp()) * 1000)::text AS now
  FROM (SELECT 1) one
  LEFT JOIN LATERAL (SELECT event_id, hash FROM ${PG_SCHEMA}.audit_events ORDER BY event_id DESC LIMIT 1) h ON true`;
// One round trip. A writer that stops answering inside the transaction is cut off by the server (its lock released)
// before the others waiting for the lock give up.
const BEGIN = `BEGIN;
  SET LOCAL lock_timeout = '15s';
  SET LOCAL idle_in_transaction_session_timeout = '10s';
  SELECT pg_advisory_xact_lock(${CHAIN_LOCK})`;
const INSERT = `INSERT INTO ${PG_SCHEMA}.audit_events
  (event_id, ts, session_id, call_id, type, payload, prev_hash, hash) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`;

/**
 * Appends events atomically, in order, as one transaction: all are committed or none. The transaction takes the chain
 * lock (`pg_advisory_xact_lock`) before reading the head, so appends from every replica form one chain with gapless
 * ids; `ts` is the database's clock, read under the lock. A writer that hangs inside its transaction is cut off by
 * the server after 10 s idle (its lock released, nothing of it written); waiting more than 15 s for the lock fails
 * the append (AUDIT_FAILED). Resolves once
 * COMMIT returned (`synchronous_commit = on`: the WAL is flushed), so the events are durable. Every event is checked first (payload schema, privacy guard, ids):
 * an invalid one refuses the whole batch before the database is touched. Rejects with AUDIT_FAILED.
 */
export async function appendPgEvents(pool: pg.Pool, inputs: readonly PgAppendInput[]): Promise<AuditEvent[]> {
  const pending = inputs.map((i) => {
    const e: PendingEvent = {
      ...i,
      callId: i.callId ?? (i.type === 'tool_call_requested' ? randomUUID() : null),
    };
    const payload = checkEventInput(e);
    try {
      return { e, payload, json: canonicalJson(payload) };
    } catch (cause) {
      throw refused(e, isSkillsError(cause) ? cause.message : 'payload cannot be canonicalized', cause);
    }
  });
  if (pending.length === 0) return [];
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
    let eventId = Number(head.event_id ?? 0);
    let prevHash = head.hash ?? GENESIS_HASH;
    const ts = Number(head.now);
    const out: AuditEvent[] = [];
    for (const { e, payload, json } of pending) {
      const event = chainEvent(e, payload, { eventId: ++eventId, ts, prevHash });
      await client.query(INSERT, [eventId, ts, e.sessionId, e.callId, e.type, json, prevHash, event.hash]);
      out.push(event);
      prevHash = event.hash;
    }
    committing = true;
    await client.query('COMMIT');
    return out;
  } catch (err) {
    broken = err;
    if (!committing) await client.query('ROLLBACK').catch(() => undefined);
    // A server error at COMMIT rolled back; a lost connection leaves the outcome unknown.
    const answered = typeof (err as { severity?: unknown }).severity === 'string';
    throw pgFailure('append', err, { inDoubt: committing && !answered });
  } finally {
    // A connection that failed mid-transaction is not given back: it may be broken or still inside the transaction.
    client.release(broken === undefined ? undefined : true);
  }
}
