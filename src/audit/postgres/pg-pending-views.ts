import type pg from 'pg';
import type { PendingViewBoard, SharedView } from '../call-log.js';
import type { SessionOwner } from '../is-owner-alive.js';
import { pgFailure } from './pg-failure.js';
import { PG_SCHEMA } from './pg-schema.js';
import { openPendingView, sealPendingView } from './seal-pending-view.js';

const T = `${PG_SCHEMA}.pending_views`;
const E = `${PG_SCHEMA}.audit_events`;

// Rows past their expiry are only ignored by readers; the next share removes them.
const SWEEP = `DELETE FROM ${T} WHERE expires_at < clock_timestamp()`;
const SHARE = `INSERT INTO ${T} (call_id, session_id, host, pid, expires_at, sealed)
  VALUES ($1, $2, $3, $4, clock_timestamp() + $5 * interval '1 millisecond', $6)
  ON CONFLICT (call_id) DO NOTHING`;
const DROP = `DELETE FROM ${T} WHERE call_id = $1`;
// Still waiting: not expired, not decided or closed, its session not ended; not this process's own.
const OTHERS = `SELECT v.call_id, v.session_id, v.host, v.pid, v.sealed FROM ${T} v
  WHERE v.expires_at > clock_timestamp() AND NOT (v.host = $1 AND v.pid = $2)
    AND NOT EXISTS (SELECT 1 FROM ${E} e WHERE e.call_id = v.call_id
      AND e.type IN ('approval_decided', 'tool_call_finished', 'tool_call_interrupted'))
    AND NOT EXISTS (SELECT 1 FROM ${E} s WHERE s.session_id = v.session_id AND s.type = 'session_ended')
  ORDER BY v.expires_at, v.call_id LIMIT $3`;

/**
 * The sealed views of console approvals waiting on the server processes that share this database: each process
 * shares what its console shows of its own waiting approvals, and reads those of the others. Sealed with `key`
 * (AES-256-GCM, the call id as additional data): a row that does not open under it is skipped, never shown.
 */
export function createPgPendingViews(pool: pg.Pool, key: Uint8Array, owner: SessionOwner): PendingViewBoard {
  return {
    async share({ callId, sessionId, ttlMs, body }) {
      const sealed = sealPendingView(key, callId, body);
      try {
        await pool.query(SWEEP);
        await pool.query(SHARE, [callId, sessionId, owner.host, owner.pid, Math.ceil(ttlMs), sealed]);
      } catch (err) {
        throw pgFailure('share a waiting approval', err);
      }
    },
    async others(limit) {
      let rows: { call_id: string; session_id: string; host: string; pid: number; sealed: Buffer }[];
      try {
        rows = (await pool.query<(typeof rows)[number]>(OTHERS, [owner.host, owner.pid, limit])).rows;
      } catch (err) {
        throw pgFailure('read the approvals waiting elsewhere', err);
      }
      const out: SharedView[] = [];
      for (const r of rows) {
        const body = openPendingView(key, r.call_id, r.sealed);
        if (body === undefined) continue;
        out.push({ callId: r.call_id, sessionId: r.session_id, host: r.host, pid: r.pid, body });
      }
      return out;
    },
    async drop(callId) {
      try {
        await pool.query(DROP, [callId]);
      } catch (err) {
        throw pgFailure('remove a shared approval', err);
      }
    },
  };
}
