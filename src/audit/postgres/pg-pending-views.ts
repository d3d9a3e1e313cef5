import type pg from 'pg';
import type { PendingViewBoard, SharedView, WaitingView } from '../replica-log.js';
import type { SessionOwner } from '../is-owner-alive.js';
import { pgFailure } from './pg-failure.js';
import { PG_SCHEMA } from './pg-schema.js';
import { openPendingView, sealPendingView } from './seal-pending-view.js';

const T = `${PG_SCHEMA}.pending_views`;
const E = `${PG_SCHEMA}.audit_events`;

/** The largest sealed input shared (the table's limit); a larger one is left out: only its card is shared. */
const MAX_SEALED_INPUT = 4 * 1024 * 1024;

const SHARE = `INSERT INTO ${T} (call_id, session_id, host, pid, principal, expires_at, sealed, sealed_input)
  VALUES ($1, $2, $3, $4, $5, clock_timestamp() + $6 * interval '1 millisecond', $7, $8)
  ON CONFLICT (call_id) DO NOTHING`;
const DROP = `DELETE FROM ${T} WHERE call_id = $1`;
// Still waiting: not expired, not decided or closed, its session not ended.
const STILL_WAITING = `v.expires_at > clock_timestamp()
  AND NOT EXISTS (SELECT 1 FROM ${E} e WHERE e.call_id = v.call_id
    AND e.type IN ('approval_decided', 'tool_call_finished', 'tool_call_interrupted'))
  AND NOT EXISTS (SELECT 1 FROM ${E} s WHERE s.session_id = v.session_id AND s.type = 'session_ended')`;
// Not this process's own. Each caller's views in turn (and within a caller, each session's in turn), so that one
// caller with many waiting approvals cannot push the others' out of the listed slots; `total` counts them all.
const WAITING = `WITH w AS (
    SELECT v.call_id, v.session_id, v.host, v.pid, v.expires_at, coalesce(v.principal, v.session_id) AS who
    FROM ${T} v WHERE NOT (v.host = $1 AND v.pid = $2) AND ${STILL_WAITING}
  ), r AS (
    SELECT w.*, row_number() OVER (PARTITION BY session_id ORDER BY expires_at, call_id) AS in_session FROM w
  ), f AS (
    SELECT r.*, row_number() OVER (PARTITION BY who ORDER BY in_session, expires_at, call_id) AS turn,
      count(*) OVER () AS total FROM r
  )
  SELECT call_id, session_id, host, pid, total::int AS total FROM f ORDER BY turn, expires_at, call_id LIMIT $3`;
const STILL = `SELECT v.call_id FROM ${T} v WHERE v.call_id = ANY($1::text[]) AND ${STILL_WAITING}`;
const CARDS = `SELECT call_id, session_id, host, pid, sealed FROM ${T} WHERE call_id = ANY($1::text[])`;
const INPUT = `SELECT v.sealed_input FROM ${T} v WHERE v.call_id = $1 AND ${STILL_WAITING}`;

/**
 * The sealed views of console approvals waiting on the server processes that share this database: each process
 * shares what its console shows of its own waiting approvals, and reads those of the others. Each part is sealed
 * with `key` (AES-256-GCM, the part and the call id as additional data): a part that does not open under it is
 * skipped, never shown. Rows go when their call is decided or closed (`drop`), with their session or their dead
 * process (`replica-lease.ts`), and once expired (`pendingViewCleanup`).
 */
export function createPgPendingViews(pool: pg.Pool, key: Uint8Array, owner: SessionOwner): PendingViewBoard {
  const query = async <R extends pg.QueryResultRow>(what: string, text: string, values: unknown[]) => {
    try {
      return (await pool.query<R>(text, values)).rows;
    } catch (err) {
      throw pgFailure(what, err);
    }
  };
  return {
    async share({ callId, sessionId, principal, ttlMs, card, input }) {
      const sealed = sealPendingView(key, 'card', callId, card);
      const full = sealPendingView(key, 'input', callId, input);
      await query('share a waiting approval', SHARE, [
        callId,
        sessionId,
        owner.host,
        owner.pid,
        principal,
        Math.ceil(ttlMs),
        sealed,
        full.length <= MAX_SEALED_INPUT ? full : null,
      ]);
    },
    async waiting(limit) {
      const rows = await query<WaitingView & { call_id: string; session_id: string; total: number }>(
        'read the approvals waiting elsewhere',
        WAITING,
        [owner.host, owner.pid, limit],
      );
      return {
        listed: rows.map((r) => ({ callId: r.call_id, sessionId: r.session_id, host: r.host, pid: r.pid })),
        total: rows[0]?.total ?? 0,
      };
    },
    async stillWaiting(callIds) {
      if (callIds.length === 0) return new Set();
      const rows = await query<{ call_id: string }>('read the approvals waiting elsewhere', STILL, [callIds]);
      return new Set(rows.map((r) => r.call_id));
    },
    async cards(callIds) {
      if (callIds.length === 0) return [];
      const rows = await query<{
        call_id: string;
        session_id: string;
        host: string;
        pid: number;
        sealed: Buffer;
      }>('read the approvals waiting elsewhere', CARDS, [callIds]);
      const out: SharedView[] = [];
      for (const r of rows) {
        const body = openPendingView(key, 'card', r.call_id, r.sealed);
        if (body === undefined) continue;
        out.push({ callId: r.call_id, sessionId: r.session_id, host: r.host, pid: r.pid, body });
      }
      return out;
    },
    async input(callId) {
      const rows = await query<{ sealed_input: Buffer | null }>('read a waiting approval’s input', INPUT, [
        callId,
      ]);
      const sealed = rows[0]?.sealed_input;
      return sealed === undefined || sealed === null
        ? undefined
        : openPendingView(key, 'input', callId, sealed);
    },
    async drop(callId) {
      await query('remove a shared approval', DROP, [callId]);
    },
  };
}
