import type pg from 'pg';
import { canonicalJson } from '../../canonical-json.js';
import { isSkillsError } from '../../errors.js';
import { createCallBook, type CallBook } from '../call-book.js';
import { newCallId } from '../call-id.js';
import { checkEventInput, refused, type PendingEvent } from '../check-event-input.js';
import { checkEventOrder } from '../check-event-order.js';
import { chainEvent } from '../chain-event.js';
import { GENESIS_HASH } from '../event-hash.js';
import { STOPPED_REFUSAL } from '../is-stopped-refusal.js';
import type { AuditEvent } from '../types.js';
import { pgFailure } from './pg-failure.js';
import { CHAIN_LOCK, PG_SCHEMA } from './pg-schema.js';

/** An event to append; `callId` may be left out for `tool_call_requested` (a new one is made). */
export type PgAppendInput = Omit<PendingEvent, 'callId'> & { callId?: string | null };

export const HEAD = `
  SELECT h.event_id::text AS event_id, h.hash, floor(extract(epoch FROM clock_timestamp()) * 1000)::text AS now
  FROM (SELECT 1) one
  LEFT JOIN LATERAL (SELECT event_id, hash FROM ${PG_SCHEMA}.audit_events ORDER BY event_id DESC LIMIT 1) h ON true`;
// One round trip. A writer that stops answering inside the transaction is cut off by the server (its lock released)
// before the others waiting for the lock give up.
export const BEGIN = `BEGIN;
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
  const ready = inputs.map(prepare);
  if (ready.length === 0) return [];
  return writePgEvents(pool, undefined, () => ready);
}

/** What an ordered append reads under the chain lock before it writes: the events of these sessions and calls. */
export interface PgWriteScope {
  sessions: readonly string[];
  calls: readonly string[];
  /**
   * Whether every event of the sessions is read (default), as closing one needs (its pending approvals and open
   * calls); else only their start and end, with the events of the calls named: what the order check reads, without
   * the cost of a session's whole history (every read-only call it made) under the chain lock.
   */
  whole?: boolean;
}

/**
 * Like {@link appendPgEvents}, and each event is also checked against the order of its session and call (the same
 * rules as the SQLite store: `checkEventOrder`), inside the transaction, holding the chain lock: what the check
 * reads cannot change before COMMIT, whichever replica writes. `build` makes the events from where the scope's
 * sessions and calls stand now (e.g. closing a session: its pending approvals and open calls); it may return [].
 * `also` runs in the same transaction after the events are inserted (whether or not there were any), e.g. to remove
 * working rows that go with what the events close.
 */
export function appendOrderedPgEvents(
  pool: pg.Pool,
  scope: PgWriteScope,
  build: (book: CallBook) => readonly PgAppendInput[],
  also?: (client: pg.PoolClient) => Promise<unknown>,
): Promise<AuditEvent[]> {
  return writePgEvents(pool, scope, (book) => build(book!).map(prepare), also);
}

export interface Prepared {
  e: PendingEvent;
  payload: Record<string, unknown>;
  json: string;
}

export function prepare(i: PgAppendInput): Prepared {
  const e: PendingEvent = {
    ...i,
    callId: i.callId ?? (i.type === 'tool_call_requested' ? newCallId() : null),
  };
  const payload = checkEventInput(e);
  try {
    return { e, payload, json: canonicalJson(payload) };
  } catch (cause) {
    throw refused(e, isSkillsError(cause) ? cause.message : 'payload cannot be canonicalized', cause);
  }
}

// A stop ("deny and stop") anywhere in the family: the session id and every `<id>.<suffix>` of the same principal.
const FAMILY_STOPPED = `SELECT DISTINCT split_part(session_id, '.', 1) AS family FROM ${PG_SCHEMA}.audit_events
  WHERE type = 'session_aborted' AND split_part(session_id, '.', 1) = ANY($1::text[])`;

/** The session family an audit session belongs to: its id without the `.suffix` another replica adds. */
const familyOf = (sessionId: string) => sessionId.split('.')[0]!;

/** An event that lets a call run: a stop recorded in its session family before it refuses it. */
const letsRun = (e: PendingEvent) =>
  e.type === 'tool_call_started' ||
  (e.type === 'approval_decided' &&
    ['approved', 'approved_for_session'].includes(String((e.payload as { decision?: unknown }).decision)));

const SCOPE = `SELECT session_id, call_id, type, payload FROM ${PG_SCHEMA}.audit_events
  WHERE (session_id = ANY($1::text[]) AND ($3 OR type IN ('session_started', 'session_ended')))
    OR call_id = ANY($2::text[])
  ORDER BY event_id`;

/** Where the sessions and calls of `scope` stand, read inside the caller's transaction (holding the chain lock). */
export async function readCallBook(client: pg.PoolClient, scope: PgWriteScope): Promise<CallBook> {
  const book = createCallBook();
  const rows = await client.query<{
    session_id: string;
    call_id: string | null;
    type: string;
    payload: string;
  }>(SCOPE, [scope.sessions, scope.calls, scope.whole ?? true]);
  for (const r of rows.rows)
    book.apply({
      type: r.type,
      sessionId: r.session_id,
      callId: r.call_id,
      payload: JSON.parse(r.payload) as Record<string, unknown>,
    });
  return book;
}

/**
 * Under the chain lock: an approving decision or a start in a session family that already has `session_aborted`
 * (written by any replica, committed before this lock was taken) is refused with {@link STOPPED_REFUSAL}.
 */
async function refuseAfterStop(client: pg.PoolClient, pending: readonly Prepared[]): Promise<void> {
  const running = pending.filter((p) => letsRun(p.e));
  if (running.length === 0) return;
  const families = [...new Set(running.map((p) => familyOf(p.e.sessionId)))];
  const { rows } = await client.query<{ family: string }>(FAMILY_STOPPED, [families]);
  const stopped = new Set(rows.map((r) => r.family));
  const hit = running.find((p) => stopped.has(familyOf(p.e.sessionId)));
  if (hit !== undefined) throw refused(hit.e, STOPPED_REFUSAL);
}

async function writePgEvents(
  pool: pg.Pool,
  scope: PgWriteScope | undefined,
  build: (book: CallBook | undefined) => Prepared[],
  also?: (client: pg.PoolClient) => Promise<unknown>,
): Promise<AuditEvent[]> {
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
    const book = scope === undefined ? undefined : await readCallBook(client, scope);
    const pending = build(book);
    if (pending.length === 0 && also === undefined) {
      await client.query('ROLLBACK');
      return [];
    }
    if (book !== undefined) await refuseAfterStop(client, pending);
    let eventId = Number(head.event_id ?? 0);
    let prevHash = head.hash ?? GENESIS_HASH;
    const ts = Number(head.now);
    const out: AuditEvent[] = [];
    for (const { e, payload, json } of pending) {
      if (book !== undefined) {
        checkEventOrder(e, payload, book);
        book.apply({ type: e.type, sessionId: e.sessionId, callId: e.callId, payload });
      }
      const event = chainEvent(e, payload, { eventId: ++eventId, ts, prevHash }, json);
      await client.query(INSERT, [eventId, ts, e.sessionId, e.callId, e.type, json, prevHash, event.hash]);
      out.push(event);
      prevHash = event.hash;
    }
    await also?.(client);
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
