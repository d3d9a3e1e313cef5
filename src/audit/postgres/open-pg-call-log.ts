import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import type { Logger } from '../../log.js';
import { assertRunsAllowed } from '../assert-runs-allowed.js';
import type { CallLog } from '../call-log.js';
import type { GateEvent, ReplicaLog, SharedPending } from '../replica-log.js';
import { CallerRecordSchema } from '../caller-record-schema.js';
import { closingEvents } from '../close-session.js';
import type { EventType } from '../event-types.js';
import type { SessionOwner } from '../is-owner-alive.js';
import { parseEventRow } from '../parse-event-row.js';
import { foldSessionRecord, SESSION_STATE_EVENTS } from '../session-state.js';
import type { AppendInput, AuditEvent } from '../types.js';
import { appendOrderedPgEvents, type PgAppendInput } from './append-pg-events.js';
import { appendPgGroups } from './append-pg-groups.js';
import { createRecordQueue, type RecordCounts } from './create-record-queue.js';
import { openPgPool, type PgPoolOptions } from './open-pg-pool.js';
import { createPgPendingViews } from './pg-pending-views.js';
import { pendingViewCleanup } from './pending-view-cleanup.js';
import { pgFailure } from './pg-failure.js';
import { PG_SCHEMA } from './pg-schema.js';
import { redactPostgresUrl } from './postgres-url.js';
import { startReplicaLease, type LeaseTimes } from './replica-lease.js';
import { projectPgCalls } from './project-pg-calls.js';
import { asRow } from './read-pg-events.js';
import { verifyPgChain } from './verify-pg-chain.js';

export interface PgCallLogOptions extends PgPoolOptions {
  /** This server, recorded in `session_started` (default this pid and host name). */
  owner?: SessionOwner;
  log?: Logger;
  /** The lease this process holds while it writes (default 10 s heartbeat, 30 s lease). */
  lease?: LeaseTimes;
  /** Seals the views of waiting console approvals shared with the other replicas (`pendingViewKey`); none without. */
  viewKey?: Uint8Array;
  /** Read-only call records that may wait for the database before new ones are shed (default 10,000). */
  maxQueuedRecords?: number;
}

/** The server's audit log in PostgreSQL: what the runner and the console need, shared by every replica. */
export interface PgCallLog extends CallLog {
  replicas: ReplicaLog;
  /** The database, as it may be shown (no password). */
  readonly target: string;
  /** Fails closed from now on: events that ask for an approval or start a process are refused. */
  refuseRuns(reason: string): void;
  /** Takes this process's lease now and keeps it (heartbeat, sweeps for dead peers), rather than on the first write. */
  holdLease(): void;
  /** What the queue of read-only records did: waiting, written, shed, failed. */
  recordCounts(): RecordCounts;
  /** Checks the chain in the background: a broken one refuses new runs; an unreachable database is only logged. */
  verifyInBackground(): Promise<void>;
  close(): Promise<void>;
}

const OF_SESSION = `SELECT event_id::text AS event_id, ts::text AS ts, session_id, call_id, type, payload, prev_hash, hash
  FROM ${PG_SCHEMA}.audit_events WHERE session_id = $1 AND ($2::text[] IS NULL OR type = ANY($2::text[]))
  ORDER BY event_id`;

// With each decision, its call's request as first recorded (what a grant's MAC is checked against).
const GATE_EVENTS = `SELECT e.event_id::text AS event_id, e.ts::text AS ts, e.session_id, e.call_id, e.type, e.payload,
    e.prev_hash, e.hash, r.payload AS requested
  FROM ${PG_SCHEMA}.audit_events e
  LEFT JOIN LATERAL (SELECT q.payload FROM ${PG_SCHEMA}.audit_events q
    WHERE e.type = 'approval_decided' AND q.call_id = e.call_id AND q.type = 'tool_call_requested'
    ORDER BY q.event_id LIMIT 1) r ON true
  WHERE e.type IN ('approval_decided', 'loop_guard_tripped', 'session_aborted')
    AND (e.session_id = $1 OR e.session_id LIKE $2) AND e.event_id > $3
    AND (e.type = 'session_aborted' OR NOT EXISTS (SELECT 1 FROM ${PG_SCHEMA}.audit_events x
         WHERE x.type = 'session_ended' AND x.session_id = e.session_id))
  ORDER BY e.event_id`;

/** What a call's `tool_call_requested` payload binds, when it has it. */
function requestedOf(payload: unknown): GateEvent['requested'] {
  if (typeof payload !== 'string') return undefined;
  let p: Record<string, unknown>;
  try {
    p = JSON.parse(payload) as Record<string, unknown>;
  } catch {
    return undefined;
  }
  if (
    typeof p !== 'object' ||
    p === null ||
    typeof p.approval_key !== 'string' ||
    typeof p.input_sha256 !== 'string'
  )
    return undefined;
  return {
    approvalKey: p.approval_key,
    inputSha256: p.input_sha256,
    bundleSha256: typeof p.bundle_sha256 === 'string' ? p.bundle_sha256 : null,
  };
}

const DECISIONS = `SELECT event_id::text AS event_id, ts::text AS ts, session_id, call_id, type, payload, prev_hash, hash
  FROM ${PG_SCHEMA}.audit_events WHERE call_id = ANY($1::text[]) AND type = 'approval_decided' ORDER BY event_id`;

// A call's events, then its session's start (for the principal it belongs to).
const PENDING = `SELECT e.type, e.session_id, e.payload FROM ${PG_SCHEMA}.audit_events e WHERE e.call_id = $1
  UNION ALL
  SELECT s.type, s.session_id, s.payload FROM ${PG_SCHEMA}.audit_events s
  WHERE s.type = 'session_started'
    AND s.session_id = (SELECT session_id FROM ${PG_SCHEMA}.audit_events WHERE call_id = $1 LIMIT 1)`;

/** The pending approval those rows show, or undefined when the call is not waiting for one. */
function pendingOf(
  callId: string,
  rows: { type: string; session_id: string; payload: string }[],
): SharedPending | undefined {
  const of = (t: string) => rows.find((r) => r.type === t);
  const req = of('tool_call_requested');
  const start = of('session_started');
  const asked = of('approval_requested');
  if (req === undefined || start === undefined || asked === undefined) return undefined;
  if (['approval_decided', 'tool_call_started', 'tool_call_finished', 'tool_call_interrupted'].some(of))
    return undefined;
  const p = JSON.parse(req.payload) as Record<string, unknown>;
  const s = JSON.parse(start.payload) as Record<string, unknown>;
  if (typeof p.approval_key !== 'string' || typeof p.input_sha256 !== 'string') return undefined;
  const caller = CallerRecordSchema.safeParse(p.caller);
  return {
    ...(caller.success ? { caller: caller.data } : {}),
    callId,
    sessionId: req.session_id,
    principalSha256: typeof s.principal_sha256 === 'string' ? s.principal_sha256 : undefined,
    tool: String(p.tool),
    skill: typeof p.skill === 'string' ? p.skill : null,
    script: typeof p.script === 'string' ? p.script : null,
    approvalKey: p.approval_key,
    inputSha256: p.input_sha256,
    requestSha256: typeof p.request_sha256 === 'string' ? p.request_sha256 : undefined,
    bundleSha256: typeof p.bundle_sha256 === 'string' ? p.bundle_sha256 : null,
    channel: String((JSON.parse(asked.payload) as Record<string, unknown>).channel),
  };
}

/** Read-only records per transaction at most: a batch holds the chain lock briefly. */
const RECORDS_PER_BATCH = 500;

/**
 * Opens the log (no connection until first use: a database that is down fails the calls that need it, not the
 * start). Three pools, so that nothing a run needs waits behind what it does not: one connection for the lease
 * (heartbeat, sweeps of dead peers), one for the read-only records (one batch at a time, bounded, shed when full:
 * `createRecordQueue`), and the rest for gate reads, sessions and the records of gated calls. Every write is one transaction holding the chain lock, in which the events of the sessions and calls it
 * names are read and each new event is checked against their order (`checkEventOrder`, as in SQLite): two replicas
 * cannot both start, decide or finish one call. The schema must exist (`migratePgAudit`).
 */
export function openPgCallLog(o: PgCallLogOptions): PgCallLog {
  const pool = openPgPool(o);
  const leasePool = openPgPool({ ...o, max: 1 });
  const recordPool = openPgPool({ ...o, max: 1 });
  const owner = o.owner ?? { pid: process.pid, host: hostname() };
  let refusal: string | undefined;
  let closed: Promise<void> | undefined;
  const runsRefused = () => refusal;
  const lost = new Set<() => void>();
  const lease = startReplicaLease(
    leasePool,
    owner,
    o.lease ?? { heartbeatMs: 10_000, leaseMs: 30_000 },
    o.log,
    () => {
      if (lost.size > 0)
        o.log?.error({ runs: lost.size }, 'audit lease lost: stopping the runs of this server');
      for (const f of lost) f();
    },
  );

  const write = async (inputs: readonly PgAppendInput[]) => {
    for (const i of inputs) assertRunsAllowed(i.type, runsRefused);
    // Registered (and what a former life on this host and pid left open closed) before the first event.
    await lease.ready();
    const calls = [...new Set(inputs.flatMap((i) => (typeof i.callId === 'string' ? [i.callId] : [])))];
    const sessions = [...new Set(inputs.map((i) => i.sessionId))];
    return appendOrderedPgEvents(pool, { sessions, calls, whole: false }, () => inputs);
  };

  const records = createRecordQueue<readonly AppendInput[]>({
    maxQueued: o.maxQueuedRecords ?? 10_000,
    maxBatch: RECORDS_PER_BATCH,
    ...(o.log === undefined ? {} : { log: o.log }),
    async write(groups) {
      for (const g of groups) for (const i of g) assertRunsAllowed(i.type, runsRefused);
      await lease.ready();
      return appendPgGroups(recordPool, groups);
    },
  });

  const sessionEvents = async <T extends EventType>(sessionId: string, types?: readonly T[]) => {
    try {
      const { rows } = await pool.query<Record<string, unknown>>(OF_SESSION, [sessionId, types ?? null]);
      return rows.map((r) => parseEventRow(asRow(r)) as AuditEvent<T>);
    } catch (err) {
      throw pgFailure('read a session', err);
    }
  };

  const refuseRuns = (reason: string) => {
    if (refusal === undefined)
      o.log?.error({ reason }, 'audit log failed verification: new runs are refused');
    refusal ??= reason;
  };

  const replicas: ReplicaLog = {
    async pendingCall(callId) {
      let rows: { type: string; session_id: string; payload: string }[];
      try {
        rows = (await pool.query<{ type: string; session_id: string; payload: string }>(PENDING, [callId]))
          .rows;
      } catch (err) {
        throw pgFailure('read a pending approval', err);
      }
      return pendingOf(callId, rows);
    },
    async gateEventsOf(sessionId, afterEventId) {
      try {
        const like = `${sessionId.replace(/[\\%_]/g, (c) => `\\${c}`)}.%`;
        const { rows } = await pool.query<Record<string, unknown>>(GATE_EVENTS, [
          sessionId,
          like,
          afterEventId,
        ]);
        return rows.map(({ requested: raw, ...row }): GateEvent => {
          const requested = requestedOf(raw);
          return { ...parseEventRow(asRow(row)), ...(requested === undefined ? {} : { requested }) };
        });
      } catch (err) {
        throw pgFailure('read the session state of other replicas', err);
      }
    },
    async decisionsOf(callIds) {
      if (callIds.length === 0) return [];
      try {
        const { rows } = await pool.query<Record<string, unknown>>(DECISIONS, [callIds]);
        return rows.map((r) => parseEventRow(asRow(r)) as AuditEvent<'approval_decided'>);
      } catch (err) {
        throw pgFailure('read the decisions of waiting approvals', err);
      }
    },
    ...(o.viewKey === undefined ? {} : { pendingViews: createPgPendingViews(pool, o.viewKey, owner) }),
    leaseFresh: () => lease.fresh(),
    onLeaseLost(listener) {
      lost.add(listener);
      return () => lost.delete(listener);
    },
  };

  return {
    target: redactPostgresUrl(o.url),
    async startSessionAsync(input, options) {
      const sessionId = options?.sessionId ?? randomUUID();
      const [ev] = await write([{ type: 'session_started', sessionId, payload: { ...input, owner } }]);
      return ev as AuditEvent<'session_started'>;
    },
    append: async <I extends AppendInput>(input: I) => (await write([input]))[0] as AuditEvent<I['type']>,
    appendMany: (inputs) => write(inputs),
    appendGroups: (groups) => records.add(groups),
    recordCounts: () => records.counts(),
    appendAsync: async <I extends AppendInput>(input: I) =>
      (await write([input]))[0] as AuditEvent<I['type']>,
    async endSession(sessionId, reason) {
      await lease.ready();
      // The views of its console approvals shared with the other replicas go in the same transaction.
      const written = await appendOrderedPgEvents(
        pool,
        { sessions: [sessionId], calls: [] },
        (book) =>
          book.session(sessionId)?.ended === true
            ? []
            : closingEvents(
                sessionId,
                { pending: book.pendingApprovals(sessionId), open: book.openCalls(sessionId) },
                reason,
                'session_ended',
              ),
        o.viewKey === undefined ? undefined : (client) => pendingViewCleanup.ofSession(client, sessionId),
      );
      const ended = written.at(-1) ?? (await sessionEvents(sessionId, ['session_ended']))[0];
      return ended as AuditEvent<'session_ended'>;
    },
    sessionState: async (sessionId) =>
      foldSessionRecord(sessionId, await sessionEvents(sessionId, SESSION_STATE_EVENTS)),
    sessionEvents,
    listCalls: async (filter) => (await projectPgCalls(pool, filter ?? {})).calls,
    getCall: async (callId) => (await projectPgCalls(pool, { callId })).detail(callId),
    replicas,
    runsRefused,
    refuseRuns,
    holdLease: () => lease.begin(),
    async verifyInBackground() {
      try {
        const { chain } = await verifyPgChain(pool);
        if (!chain.ok) refuseRuns(`chain broken at event ${chain.badEventId}: ${chain.reason}`);
      } catch (err) {
        o.log?.warn({ err }, 'could not check the audit chain at start');
      }
    },
    close: () =>
      (closed ??= records
        .drain()
        .then(() => lease.stop())
        .then(() => Promise.all([pool.end(), leasePool.end(), recordPool.end()]))
        .then(() => undefined)),
  };
}
