import type pg from 'pg';
import type { Logger } from '../../log.js';
import { closingEvents } from '../close-session.js';
import type { SessionOwner } from '../is-owner-alive.js';
import { appendOrderedPgEvents } from './append-pg-events.js';
import { pgFailure } from './pg-failure.js';
import { pendingViewCleanup } from './pending-view-cleanup.js';
import { PG_SCHEMA } from './pg-schema.js';

/** How soon a failed renewal is tried again (at most; never later than the next heartbeat). */
const RETRY_MS = 500;

export interface LeaseTimes {
  heartbeatMs: number;
  leaseMs: number;
}

const REGISTER = `INSERT INTO ${PG_SCHEMA}.replicas (host, pid) VALUES ($1, $2)
  ON CONFLICT (host, pid) DO UPDATE SET started_at = clock_timestamp(), heartbeat_at = clock_timestamp()`;
const RENEW = `UPDATE ${PG_SCHEMA}.replicas SET heartbeat_at = clock_timestamp() WHERE host = $1 AND pid = $2`;
const EXPIRED = `SELECT host, pid FROM ${PG_SCHEMA}.replicas
  WHERE heartbeat_at < clock_timestamp() - make_interval(secs => $1::double precision / 1000)
    AND NOT (host = $2 AND pid = $3)`;
const FORGET = `DELETE FROM ${PG_SCHEMA}.replicas WHERE host = $1 AND pid = $2`;

/** Removes a dead server's lease row and whatever views of its approvals are left, in one transaction. */
async function forgetPeer(pool: pg.Pool, peer: SessionOwner): Promise<void> {
  const client = await pool.connect();
  let broken: unknown;
  try {
    await client.query('BEGIN');
    await pendingViewCleanup.ofProcess(client, peer);
    await client.query(FORGET, [peer.host, peer.pid]);
    await client.query('COMMIT');
  } catch (err) {
    broken = err;
    await client.query('ROLLBACK').catch(() => undefined);
    throw err;
  } finally {
    client.release(broken === undefined ? undefined : true);
  }
}
const OPEN_SESSIONS = `SELECT s.session_id FROM ${PG_SCHEMA}.audit_events s
  WHERE s.type = 'session_started' AND (s.payload::jsonb -> 'owner') = $1::jsonb
    AND NOT EXISTS (SELECT 1 FROM ${PG_SCHEMA}.audit_events e WHERE e.type = 'session_ended' AND e.session_id = s.session_id)
  ORDER BY s.event_id`;

/**
 * Closes the sessions `owner` left open in the log, each in one transaction (pending approvals denied, open calls
 * interrupted with reason `server_restart`, `session_ended`) that also removes the views of its console approvals
 * it had shared (`pending_views`). Safe to race: a session another process closed first is skipped. Returns how many
 * sessions were closed.
 */
export async function closeSessionsOf(
  pool: pg.Pool,
  owner: SessionOwner,
  interrupted: 'server_restart' | 'lease_expired' = 'server_restart',
): Promise<number> {
  let ids: string[];
  try {
    const { rows } = await pool.query<{ session_id: string }>(OPEN_SESSIONS, [
      JSON.stringify({ pid: owner.pid, host: owner.host }),
    ]);
    ids = rows.map((r) => r.session_id);
  } catch (err) {
    throw pgFailure('find the sessions of a stopped server', err);
  }
  let closed = 0;
  for (const id of ids) {
    const written = await appendOrderedPgEvents(
      pool,
      { sessions: [id], calls: [] },
      (book) =>
        book.session(id)?.ended !== false
          ? []
          : closingEvents(
              id,
              { pending: book.pendingApprovals(id), open: book.openCalls(id) },
              'server_restart',
              'server_restart',
              interrupted,
            ),
      (client) => pendingViewCleanup.ofSession(client, id),
    );
    if (written.length > 0) closed++;
  }
  return closed;
}

export interface ReplicaLease {
  /** Resolves once this process is registered and what it left open in a former life (same host and pid) closed. */
  ready(): Promise<void>;
  /** Starts the heartbeat now (registering at once, and again on each beat until it succeeds). */
  begin(): void;
  /**
   * One sweep now: closes the sessions of every server whose lease expired — once this process has been in touch
   * with the database for a whole lease itself (a no-op before).
   */
  sweep(): Promise<void>;
  /**
   * Whether this process's lease is fresh: its last successful renewal (monotonic clock) is younger than the lease
   * less a third of it. A process stalled or cut off longer may have been swept by a peer.
   */
  fresh(): boolean;
  /** Stops renewing and removes this process's row (its sessions are ended by the caller first). */
  stop(): Promise<void>;
}

/**
 * This process's lease in `replicas`: registered on first use, renewed every `heartbeatMs`; each renewal also sweeps
 * for servers whose lease is older than `leaseMs` (killed, hung, cut off) and closes their open sessions in the log
 * as crash recovery does for SQLite, removing the views of console approvals they had shared — but only once this
 * process's own renewals have succeeded for `leaseMs` in a row, so a database outage does not make live peers look
 * dead. Each renewal then removes the shared views past their expiry. A restarted server with the same host and pid
 * (a container's pid 1) closes its former life's sessions at once. Registration that fails (database down) is tried
 * again on the next use.
 */
export function startReplicaLease(
  pool: pg.Pool,
  self: SessionOwner,
  t: LeaseTimes,
  log?: Logger,
  onLost?: () => void,
): ReplicaLease {
  let registered: Promise<void> | undefined;
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;

  /**
   * Since when (monotonic ms) every renewal of this process has succeeded. A peer's lease counts as expired only once
   * this process has itself been in touch with the database for a whole lease: after an outage every lease looks
   * expired, and the peers that were as cut off as this one must get the time to renew before anyone is swept.
   */
  let inTouchSince: number | undefined;
  /** When (monotonic ms) this process last registered or renewed its row successfully. */
  let renewedAt: number | undefined;
  const lapsed = () => renewedAt !== undefined && performance.now() - renewedAt >= t.leaseMs;
  const fresh = () => renewedAt !== undefined && performance.now() - renewedAt < t.leaseMs - t.leaseMs / 3;
  const mayJudgePeers = () => inTouchSince !== undefined && performance.now() - inTouchSince >= t.leaseMs;

  const sweep = async () => {
    if (!mayJudgePeers()) return;
    const { rows } = await pool.query<{ host: string; pid: number }>(EXPIRED, [
      t.leaseMs,
      self.host,
      self.pid,
    ]);
    for (const r of rows) {
      // Only its lease is known to have run out: the process may be alive and its scripts still running.
      const closed = await closeSessionsOf(pool, { host: r.host, pid: r.pid }, 'lease_expired');
      await forgetPeer(pool, { host: r.host, pid: r.pid });
      log?.warn(
        { host: r.host, pid: r.pid, closedSessions: closed },
        'closed the sessions of a server whose lease expired',
      );
    }
  };

  // One renewal at a time: a renewal the database holds up (a lock, a stall) does not pile up pool connections.
  let ticking = false;
  // After a failed renewal the next try comes soon, not a whole heartbeat later: once the database is back, the lease
  // is fresh again (and runs allowed) within a fraction of a second.
  let retry: NodeJS.Timeout | undefined;
  const retryMs = Math.min(t.heartbeatMs, RETRY_MS);
  const tick = async () => {
    if (ticking) {
      // A renewal the database holds up: the lease may lapse meanwhile, and what still runs must stop then.
      if (lapsed()) lose();
      return;
    }
    ticking = true;
    clearTimeout(retry);
    retry = undefined;
    let ok = false;
    try {
      ok = await renew();
    } finally {
      ticking = false;
    }
    if (!ok && !stopped) retry = setTimeout(() => void tick(), retryMs).unref();
  };

  // The lease is lost (its row gone, or no good renewal for a whole lease): a peer may have recorded this process's
  // calls interrupted, so what still runs of them is stopped before this process goes on (and registers again).
  const lose = () => {
    renewedAt = undefined;
    onLost?.();
  };

  /** Whether the row is renewed (or registered) now. */
  const renew = async (): Promise<boolean> => {
    if (lapsed()) lose();
    if (registered === undefined) {
      return ready().then(
        () => true,
        (err: unknown) => {
          log?.warn({ err: pgFailure('register this server', err).message }, 'audit lease not taken yet');
          return false;
        },
      );
    }
    try {
      const asked = performance.now();
      const renewed = await pool.query(RENEW, [self.host, self.pid]);
      if (renewed.rowCount === 0) {
        lose();
        // A peer took this process for dead and closed its sessions: they refuse further events (fail closed), and
        // the runner continues each in a new session on its next call.
        log?.error({}, 'this server’s lease had expired: a peer closed its sessions; registering again');
        await pool.query(REGISTER, [self.host, self.pid]);
      }
      renewedAt = asked;
      inTouchSince ??= performance.now();
      await sweep();
    } catch (err) {
      inTouchSince = undefined;
      if (lapsed()) lose();
      log?.warn({ err: pgFailure('renew the server lease', err).message }, 'audit lease not renewed');
      return false;
    }
    // Views of approvals past their timeout: nobody can decide them any more.
    await pendingViewCleanup
      .expired(pool)
      .catch((err: unknown) =>
        log?.warn(
          { err: pgFailure('remove expired views', err).message },
          'expired shared approvals not removed',
        ),
      );
    return true;
  };

  const ready = () =>
    (registered ??= (async () => {
      try {
        const asked = performance.now();
        await pool.query(REGISTER, [self.host, self.pid]);
        renewedAt = asked;
      } catch (err) {
        throw pgFailure('register this server', err);
      }
      inTouchSince ??= performance.now();
      const closed = await closeSessionsOf(pool, self);
      if (closed > 0)
        log?.warn({ closedSessions: closed }, 'closed the sessions this server left open before a restart');
      await sweep();
    })().catch((err: unknown) => {
      registered = undefined;
      throw err;
    }));

  const begin = () => {
    if (stopped || timer !== undefined) return;
    timer = setInterval(() => void tick(), t.heartbeatMs);
    timer.unref();
    void tick();
  };

  return {
    ready: () => {
      begin();
      return ready();
    },
    begin,
    sweep,
    fresh,
    async stop() {
      stopped = true;
      clearInterval(timer);
      clearTimeout(retry);
      if (registered === undefined) return;
      await pool.query(FORGET, [self.host, self.pid]).catch(() => undefined);
    },
  };
}
