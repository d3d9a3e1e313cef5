import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openPgCallLog, type PgCallLog } from '../../src/audit/postgres/open-pg-call-log.js';
import { verifyPgChain } from '../../src/audit/postgres/verify-pg-chain.js';
import { openPgPool } from '../../src/audit/postgres/open-pg-pool.js';
import {
  createAuditDb,
  startTestPostgres,
  type TestAuditDb,
  type TestPostgres,
} from '../helpers/postgres.js';
import { finished, requested, sha, started } from '../audit/helpers/sample-events.js';

// The server's audit log in a real PostgreSQL: two logs opened on one database stand for two replicas. The per-call
// order rules hold across them, checked inside the append transaction under the chain lock.
let server: TestPostgres;
let db: TestAuditDb;
let a: PgCallLog;
let b: PgCallLog;

const SESSION = { transport: 'stdio' as const, server_version: '0.0.0-test' };

beforeAll(async () => {
  server = startTestPostgres();
  db = await createAuditDb(server);
  const env = { PGPASSWORD: db.writer.password };
  a = openPgCallLog({ url: db.writerUrl, env, owner: { pid: 1001, host: 'replica-a' } });
  b = openPgCallLog({ url: db.writerUrl, env, owner: { pid: 1002, host: 'replica-b' } });
}, 60_000);
afterAll(async () => {
  await a?.close();
  await b?.close();
  server?.cleanup();
});

const newCall = async (log: PgCallLog, sessionId: string, callId: string) =>
  log.appendMany([
    { type: 'tool_call_requested', sessionId, callId, payload: requested({ approval_key: sha('k') }) },
    {
      type: 'policy_decided',
      sessionId,
      callId,
      payload: { decision: 'allow', rule: 'test', risk: { level: 'low', code: 'none', reason: 'test' } },
    },
  ]);

describe('the PostgreSQL call log (what the server writes through)', () => {
  it('starts a session with its owner, and refuses a second start of the same id on another replica', async () => {
    const ev = await a.startSessionAsync(SESSION, { sessionId: 's-owner' });
    expect(ev.payload.owner).toEqual({ pid: 1001, host: 'replica-a' });
    await expect(b.startSessionAsync(SESSION, { sessionId: 's-owner' })).rejects.toThrow(
      /audit refused session_started: the session already exists/,
    );
  });

  it('refuses events for an unknown session, a second start, and anything after a terminal event', async () => {
    await expect(newCall(a, 'nobody', 'c-nobody')).rejects.toThrow(/unknown session/);
    await a.startSessionAsync(SESSION, { sessionId: 's-order' });
    await newCall(a, 's-order', 'c1');
    await a.append({ type: 'tool_call_started', sessionId: 's-order', callId: 'c1', payload: started() });
    await expect(
      b.append({ type: 'tool_call_started', sessionId: 's-order', callId: 'c1', payload: started() }),
    ).rejects.toThrow(/the call was already started/);
    await b.append({ type: 'tool_call_finished', sessionId: 's-order', callId: 'c1', payload: finished() });
    await expect(
      a.append({ type: 'tool_call_finished', sessionId: 's-order', callId: 'c1', payload: finished() }),
    ).rejects.toThrow(/the call already has its terminal event/);
    await expect(newCall(b, 's-order', 'c1')).rejects.toThrow(/the call id is already used/);
  });

  it('lets exactly one of two replicas racing to start the same call win', async () => {
    await a.startSessionAsync(SESSION, { sessionId: 's-race' });
    for (let i = 0; i < 5; i++) {
      const callId = `race-${i}`;
      await newCall(a, 's-race', callId);
      const results = await Promise.allSettled([
        a.append({ type: 'tool_call_started', sessionId: 's-race', callId, payload: started() }),
        b.append({ type: 'tool_call_started', sessionId: 's-race', callId, payload: started() }),
      ]);
      expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
      const lost = results.find((r) => r.status === 'rejected') as PromiseRejectedResult;
      expect(String(lost.reason)).toMatch(/the call was already started/);
    }
  });

  it('refuses to finish a call whose approval is pending, and a second decision from another replica', async () => {
    await a.startSessionAsync(SESSION, { sessionId: 's-approval' });
    await newCall(a, 's-approval', 'ap1');
    const key = sha('k');
    await a.append({
      type: 'approval_requested',
      sessionId: 's-approval',
      callId: 'ap1',
      payload: { approval_key: key, channel: 'elicitation' },
    });
    await expect(
      b.append({ type: 'tool_call_finished', sessionId: 's-approval', callId: 'ap1', payload: finished() }),
    ).rejects.toThrow(/its approval is still pending/);
    const decided = {
      type: 'approval_decided' as const,
      sessionId: 's-approval',
      callId: 'ap1',
      payload: {
        approval_key: key,
        decision: 'approved' as const,
        reason: 'user' as const,
        channel: 'elicitation' as const,
      },
    };
    const results = await Promise.allSettled([a.append(decided), b.append(decided)]);
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    await expect(
      b.append({ ...decided, payload: { ...decided.payload, approval_key: sha('other') } }),
    ).rejects.toThrow(/approval was already decided/);
  });

  it('ends a session: pending approvals denied, open calls interrupted, then session_ended; idempotent', async () => {
    await a.startSessionAsync(SESSION, { sessionId: 's-end' });
    await newCall(a, 's-end', 'e1');
    await a.append({
      type: 'approval_requested',
      sessionId: 's-end',
      callId: 'e1',
      payload: { approval_key: sha('k'), channel: 'console' },
    });
    await newCall(a, 's-end', 'e2');
    await a.append({ type: 'tool_call_started', sessionId: 's-end', callId: 'e2', payload: started() });
    const ended = await b.endSession('s-end', 'shutdown');
    expect(ended.payload).toEqual({ reason: 'shutdown', interrupted_calls: 2 });
    const events = await a.sessionEvents('s-end');
    expect(events.slice(-4).map((e) => [e.type, e.callId])).toEqual([
      ['approval_decided', 'e1'],
      ['tool_call_interrupted', 'e1'],
      ['tool_call_interrupted', 'e2'],
      ['session_ended', null],
    ]);
    expect((await a.endSession('s-end', 'shutdown')).eventId).toBe(ended.eventId);
    const state = await b.sessionState('s-end');
    expect(state).toMatchObject({ exists: true, open: false });
    await expect(newCall(a, 's-end', 'e3')).rejects.toThrow(/the session has ended/);
  });

  it('rebuilds session state (grants, denials) and lists calls with their events, on either replica', async () => {
    await a.startSessionAsync(SESSION, { sessionId: 's-state' });
    await newCall(a, 's-state', 'g1');
    await a.append({
      type: 'approval_decided',
      sessionId: 's-state',
      callId: 'g1',
      payload: {
        approval_key: sha('k'),
        decision: 'approved_for_session',
        reason: 'user',
        channel: 'console',
      },
    });
    const state = await b.sessionState('s-state');
    expect(state.grants).toEqual([sha('k')]);
    const calls = await b.listCalls({ limit: 3 });
    // The three most recent calls, oldest first, whichever replica wrote them.
    expect(calls.map((c) => c.callId)).toEqual(['e1', 'e2', 'g1']);
    expect(calls.map((c) => c.state)).toEqual(['interrupted', 'interrupted', 'requested']);
    const detail = await b.getCall('g1');
    expect(detail?.call.approvalDecision).toBe('approved_for_session');
    expect(detail?.events.map((e) => e.type)).toEqual([
      'tool_call_requested',
      'policy_decided',
      'approval_decided',
    ]);
    expect(await b.getCall('no-such-call')).toBeUndefined();
  });

  it('gives a waiting call with what the person was asked about, and none for a record of an older version', async () => {
    await a.startSessionAsync(SESSION, { sessionId: 's-pending' });
    const ask = async (callId: string, over: Parameters<typeof requested>[0]) =>
      a.appendMany([
        { type: 'tool_call_requested', sessionId: 's-pending', callId, payload: requested(over) },
        {
          type: 'approval_requested',
          sessionId: 's-pending',
          callId,
          payload: {
            approval_key: sha('key'),
            channel: 'elicitation',
            shown: { risk: { level: 'low', code: 'none' }, findings: [] },
          },
        },
      ]);
    await ask('p-new', { request_sha256: sha('request') });
    await ask('p-old', {});
    expect(await b.replicas.pendingCall('p-new')).toMatchObject({
      sessionId: 's-pending',
      approvalKey: sha('key'),
      requestSha256: sha('request'),
    });
    const old = await b.replicas.pendingCall('p-old');
    expect(old).toBeDefined();
    expect(old?.requestSha256).toBeUndefined();
  });

  it('keeps one valid chain for everything both replicas wrote', async () => {
    const pool = openPgPool({ url: db.writerUrl, env: { PGPASSWORD: db.writer.password } });
    try {
      const { chain } = await verifyPgChain(pool);
      expect(chain.ok).toBe(true);
      expect(chain.events).toBeGreaterThan(30);
    } finally {
      await pool.end();
    }
  });
});
