import type pg from 'pg';
import type { SessionOwner } from '../is-owner-alive.js';
import { PG_SCHEMA } from './pg-schema.js';

const T = `${PG_SCHEMA}.pending_views`;

/**
 * Removing shared views of console approvals (`pending_views`) that nobody can decide any more, besides a call's own
 * view, which its process drops once the call is decided or closed: each takes a client (or the pool), so that it
 * can run inside the transaction that closes what the view belonged to. Each resolves with how many rows went.
 */
export const pendingViewCleanup = {
  /** The views of a session's calls: in the transaction that ends the session. */
  ofSession: async (db: pg.ClientBase | pg.Pool, sessionId: string) =>
    (await db.query(`DELETE FROM ${T} WHERE session_id = $1`, [sessionId])).rowCount ?? 0,
  /** The views a server process shared: once its lease expired and its sessions are closed. */
  ofProcess: async (db: pg.ClientBase | pg.Pool, owner: SessionOwner) =>
    (await db.query(`DELETE FROM ${T} WHERE host = $1 AND pid = $2`, [owner.host, owner.pid])).rowCount ?? 0,
  /** Every view past its expiry (the approval's timeout): on each lease heartbeat. */
  expired: async (db: pg.ClientBase | pg.Pool) =>
    (await db.query(`DELETE FROM ${T} WHERE expires_at < clock_timestamp()`)).rowCount ?? 0,
};
