import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PendingViewBoard } from '../../src/audit/replica-log.js';
import { openPgCallLog, type PgCallLog } from '../../src/audit/postgres/open-pg-call-log.js';
import { pendingViewKey } from '../../src/audit/postgres/pending-view-key.js';
import { requested, sha } from '../audit/helpers/sample-events.js';
import {
  createAuditDb,
  startTestPostgres,
  type TestAuditDb,
  type TestPostgres,
} from '../helpers/postgres.js';

// The board of shared console views in a real PostgreSQL: replica A shares, replica B reads (two logs on one
// database, each with its own owner). What B lists, how many it says wait, what it asks by id, what it opens.
let server: TestPostgres;
let db: TestAuditDb;
let a: PgCallLog;
let b: PgCallLog;
let stranger: PgCallLog;
const key = pendingViewKey(randomBytes(32));
const SESSION = { transport: 'http' as const, server_version: '0.0.0-test' };

const board = (log: PgCallLog): PendingViewBoard => log.replicas.pendingViews!;
const share = (callId: string, sessionId: string, principal: string, ttlMs: number) =>
  board(a).share({
    callId,
    sessionId,
    principal,
    ttlMs,
    card: { callId, what: 'card' },
    input: { argv: [], input: { text: `input of ${callId}` } },
  });
const ids = async (limit: number) => {
  const w = await board(b).waiting(limit);
  return { ids: w.listed.map((v) => v.callId), total: w.total };
};

beforeAll(async () => {
  server = startTestPostgres();
  db = await createAuditDb(server);
  const env = { PGPASSWORD: db.writer.password };
  a = openPgCallLog({ url: db.writerUrl, env, owner: { pid: 2001, host: 'replica-a' }, viewKey: key });
  b = openPgCallLog({ url: db.writerUrl, env, owner: { pid: 2002, host: 'replica-b' }, viewKey: key });
  stranger = openPgCallLog({
    url: db.writerUrl,
    env,
    owner: { pid: 2003, host: 'replica-c' },
    viewKey: pendingViewKey(randomBytes(32)),
  });
}, 60_000);
afterAll(async () => {
  await a?.close();
  await b?.close();
  await stranger?.close();
  server?.cleanup();
});

describe('the shared console views in PostgreSQL', () => {
  it('lists the views of other processes in turn from each caller and each session, and counts them all', async () => {
    // Caller P1: two sessions with 5 waiting approvals each, all expiring before caller P2's single one.
    for (let i = 0; i < 5; i++) {
      await share(`p1-s1-${i}`, 'p1-s1', 'P1', 60_000 + i);
      await share(`p1-s2-${i}`, 'p1-s2', 'P1', 60_100 + i);
    }
    await share('p2-s1-0', 'p2-s1', 'P2', 120_000);
    const three = await ids(3);
    expect(three.total).toBe(11);
    // P1's first turn (its soonest expiring), P2's first turn, then P1's second turn (its other session's first).
    expect(three.ids).toEqual(['p1-s1-0', 'p2-s1-0', 'p1-s2-0']);
    expect((await ids(100)).ids).toHaveLength(11);
    // Never its own.
    expect((await board(a).waiting(100)).total).toBe(0);
  });

  it('asks by id whether a call still waits, whatever its place in the listing', async () => {
    const all = ['p1-s1-4', 'p1-s2-4', 'p2-s1-0', 'never-shared'];
    expect([...(await board(b).stillWaiting(all))].sort()).toEqual(['p1-s1-4', 'p1-s2-4', 'p2-s1-0']);
    await board(a).drop('p1-s2-4');
    expect(await board(b).stillWaiting(all)).not.toContain('p1-s2-4');
    expect(await board(b).stillWaiting([])).toEqual(new Set());
  });

  it('no longer lists nor counts a call once the log holds it decided', async () => {
    await a.startSessionAsync(SESSION, { sessionId: 's-decided' });
    await share('c-decided', 's-decided', 'P3', 60_000);
    expect(await board(b).stillWaiting(['c-decided'])).toContain('c-decided');
    const k = sha('k-decided');
    await a.appendMany([
      {
        type: 'tool_call_requested',
        sessionId: 's-decided',
        callId: 'c-decided',
        payload: requested({ approval_key: k }),
      },
      {
        type: 'policy_decided',
        sessionId: 's-decided',
        callId: 'c-decided',
        payload: { decision: 'ask', rule: 'test', risk: { level: 'low', code: 'none', reason: 'test' } },
      },
      {
        type: 'approval_requested',
        sessionId: 's-decided',
        callId: 'c-decided',
        payload: { approval_key: k, channel: 'console' },
      },
      {
        type: 'approval_decided',
        sessionId: 's-decided',
        callId: 'c-decided',
        payload: { approval_key: k, decision: 'denied', reason: 'user', channel: 'console' },
      },
    ]);
    expect(await board(b).stillWaiting(['c-decided'])).not.toContain('c-decided');
    expect((await ids(100)).ids).not.toContain('c-decided');
    expect(await board(b).input('c-decided')).toBeUndefined();
  });

  it('opens each part only under the shared key, as that part of that call', async () => {
    const [card] = await board(b).cards(['p2-s1-0']);
    expect(card).toMatchObject({ callId: 'p2-s1-0', sessionId: 'p2-s1', host: 'replica-a', pid: 2001 });
    expect(card?.body).toEqual({ callId: 'p2-s1-0', what: 'card' });
    expect(await board(b).input('p2-s1-0')).toEqual({ argv: [], input: { text: 'input of p2-s1-0' } });
    // Another secret opens nothing.
    expect(await board(stranger).cards(['p2-s1-0'])).toEqual([]);
    expect(await board(stranger).input('p2-s1-0')).toBeUndefined();
    // A card moved under another call id (the superuser rewrites the row) does not open there.
    await server.superuser(db.database, (c) =>
      c.query(
        `UPDATE skills_mcp.pending_views SET sealed = (SELECT sealed FROM skills_mcp.pending_views WHERE call_id = $1),
           sealed_input = (SELECT sealed_input FROM skills_mcp.pending_views WHERE call_id = $1) WHERE call_id = $2`,
        ['p2-s1-0', 'p1-s1-1'],
      ),
    );
    expect(await board(b).cards(['p1-s1-1'])).toEqual([]);
    expect(await board(b).input('p1-s1-1')).toBeUndefined();
  });

  it('removes the views of a session in the transaction that ends it', async () => {
    await a.startSessionAsync(SESSION, { sessionId: 's-ending' });
    await share('c-ending', 's-ending', 'P4', 60_000);
    expect(await board(b).stillWaiting(['c-ending'])).toContain('c-ending');
    await a.endSession('s-ending', 'client_closed');
    const left = await server.superuser(
      db.database,
      async (c) =>
        (await c.query('SELECT 1 FROM skills_mcp.pending_views WHERE session_id = $1', ['s-ending']))
          .rowCount,
    );
    expect(left).toBe(0);
  });
});
