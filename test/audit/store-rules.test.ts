import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { isSkillsError } from '../../src/errors.js';
import { openAuditStore, type AuditStore } from '../../src/audit/index.js';
import { finished, requested, sha, startSession, started } from './helpers/sample-events.js';
import { tempDir } from './helpers/temp-dir.js';

describe('audit store write rules', () => {
  let t: ReturnType<typeof tempDir>;
  let store: AuditStore;
  let s: string;
  const count = () => [...store.exportEvents()].length;
  const expectRefused = (fn: () => unknown, message: RegExp) => {
    const before = count();
    let error: unknown;
    try {
      fn();
    } catch (e) {
      error = e;
    }
    expect(isSkillsError(error) && error.code).toBe('AUDIT_FAILED');
    expect((error as Error).message).toMatch(message);
    expect(count()).toBe(before);
  };

  beforeEach(() => {
    t = tempDir();
    store = openAuditStore({ path: t.dbPath });
    s = startSession(store);
  });
  afterEach(() => {
    store.close();
    t.cleanup();
  });

  it('returns only after the event is committed: another connection sees it at once', () => {
    const e = store.append({ type: 'tool_call_requested', sessionId: s, payload: requested() });
    const other = new Database(t.dbPath, { readonly: true });
    try {
      const row = other.prepare('SELECT hash, type, call_id FROM events WHERE event_id = ?').get(e.eventId);
      expect(row).toEqual({ hash: e.hash, type: 'tool_call_requested', call_id: e.callId });
    } finally {
      other.close();
    }
    expect(store.getEvent(e.eventId)).toEqual(e);
  });

  it('creates the folder, and the file readable by its owner only', async () => {
    const { statSync } = await import('node:fs');
    expect(statSync(t.dbPath).mode & 0o777).toBe(0o600);
  });

  it('refuses events for an unknown or ended session', () => {
    expectRefused(
      () => store.append({ type: 'tool_call_requested', sessionId: 'nope', payload: requested() }),
      /unknown session/,
    );
    store.endSession(s, 'client_closed');
    expectRefused(
      () => store.append({ type: 'tool_call_requested', sessionId: s, payload: requested() }),
      /has ended/,
    );
  });

  it('refuses a second start, events after the terminal one, and a terminal event while approval is pending', () => {
    const callId = store.append({ type: 'tool_call_requested', sessionId: s, payload: requested() }).callId;
    expectRefused(
      () => store.append({ type: 'tool_call_requested', sessionId: s, callId, payload: requested() }),
      /already used/,
    );
    store.append({
      type: 'approval_requested',
      sessionId: s,
      callId,
      payload: { approval_key: sha('key'), channel: 'elicitation' },
    });
    expectRefused(
      () => store.append({ type: 'tool_call_finished', sessionId: s, callId, payload: finished() }),
      /approval is still pending/,
    );
    expectRefused(
      () =>
        store.append({
          type: 'approval_decided',
          sessionId: s,
          callId,
          payload: {
            approval_key: sha('other'),
            decision: 'approved',
            reason: 'user',
            channel: 'elicitation',
          },
        }),
      /approval_key differs/,
    );
    store.append({
      type: 'approval_decided',
      sessionId: s,
      callId,
      payload: { approval_key: sha('key'), decision: 'approved', reason: 'user', channel: 'elicitation' },
    });
    store.append({ type: 'tool_call_started', sessionId: s, callId, payload: started() });
    expectRefused(
      () => store.append({ type: 'tool_call_started', sessionId: s, callId, payload: started() }),
      /already started/,
    );
    store.append({ type: 'tool_call_finished', sessionId: s, callId, payload: finished() });
    expectRefused(
      () => store.append({ type: 'tool_call_finished', sessionId: s, callId, payload: finished() }),
      /terminal event/,
    );
    expectRefused(
      () =>
        store.append({
          type: 'tool_call_interrupted',
          sessionId: s,
          callId,
          payload: { reason: 'server_restart', stage: 'started' },
        }),
      /terminal event/,
    );
  });

  it('refuses a call event for a call of another session', () => {
    const other = startSession(store);
    const callId = store.append({ type: 'tool_call_requested', sessionId: s, payload: requested() }).callId;
    expectRefused(
      () => store.append({ type: 'tool_call_started', sessionId: other, callId, payload: started() }),
      /another session/,
    );
  });

  it('writes a batch atomically: one bad event and nothing is written', () => {
    const callId = 'call-batch';
    expectRefused(
      () =>
        store.appendMany([
          { type: 'tool_call_requested', sessionId: s, callId, payload: requested({ read_only: true }) },
          { type: 'tool_call_started', sessionId: s, callId, payload: started() },
          { type: 'tool_call_started', sessionId: s, callId, payload: started() },
        ]),
      /already started/,
    );
    const ok = store.appendMany([
      {
        type: 'tool_call_requested',
        sessionId: s,
        callId,
        payload: requested({ read_only: true, approval_key: null }),
      },
      { type: 'tool_call_finished', sessionId: s, callId, payload: finished() },
    ]);
    expect(ok.map((e) => e.type)).toEqual(['tool_call_requested', 'tool_call_finished']);
    expect(store.getCall(callId)?.call).toMatchObject({ state: 'finished', status: 'ok' });
  });

  it('ends a session once, interrupting its open calls, and returns the same event when asked again', () => {
    const open = store.append({ type: 'tool_call_requested', sessionId: s, payload: requested() }).callId;
    const ended = store.endSession(s, 'signal');
    expect(ended.payload).toEqual({ reason: 'signal', interrupted_calls: 1 });
    expect(store.getCall(open)?.call).toMatchObject({ state: 'interrupted', status: 'interrupted' });
    expect(store.getCall(open)?.events.at(-1)?.payload).toEqual({
      reason: 'session_ended',
      stage: 'requested',
    });
    expect(store.endSession(s, 'client_closed')).toEqual(ended);
  });

  it('refuses writes on a read-only store and after close', () => {
    const ro = openAuditStore({ path: t.dbPath, readOnly: true });
    try {
      expect(() => ro.append({ type: 'tool_call_requested', sessionId: s, payload: requested() })).toThrow(
        /read-only/,
      );
      expect(ro.verify().ok).toBe(true);
    } finally {
      ro.close();
    }
    store.close();
    expect(() => store.append({ type: 'tool_call_requested', sessionId: s, payload: requested() })).toThrow(
      expect.objectContaining({ code: 'AUDIT_FAILED' }),
    );
  });

  it('refuses to open a file that is not an audit log', () => {
    const db = new Database(`${t.dir}/other.db`);
    db.exec('CREATE TABLE notes (x)');
    db.close();
    expect(() => openAuditStore({ path: `${t.dir}/other.db` })).toThrow(/not a skills-mcp audit log/);
  });

  it('refuses a non-integer clock instead of writing a float timestamp', () => {
    store.close();
    const floaty = openAuditStore({ path: t.dbPath, now: () => 1.5, recover: false });
    try {
      expect(() => floaty.startSession({ transport: 'cli', server_version: '0.1.0' })).toThrow(
        /integer milliseconds/,
      );
    } finally {
      floaty.close();
    }
  });
});
