import Database from 'better-sqlite3';
import { spawnSync } from 'node:child_process';
import { hostname } from 'node:os';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { isOwnerAlive, openAuditStore } from '../../src/audit/index.js';
import { gatedCall, requested, sha, startSession, started } from './helpers/sample-events.js';
import { tempDir } from './helpers/temp-dir.js';

describe('audit crash recovery at open', () => {
  let t: ReturnType<typeof tempDir>;
  beforeEach(() => {
    t = tempDir();
  });
  afterEach(() => t.cleanup());

  /** Leaves a session open as a killed server would: a pending approval, a started call, a finished one. */
  function crashedServer(owner = { pid: 999_999_999, host: hostname() }) {
    const store = openAuditStore({ path: t.dbPath, owner });
    const s = startSession(store);
    const done = gatedCall(store, s);
    const asking = store.append({ type: 'tool_call_requested', sessionId: s, payload: requested() }).callId;
    store.append({
      type: 'approval_requested',
      sessionId: s,
      callId: asking,
      payload: { approval_key: sha('key'), channel: 'elicitation' },
    });
    const running = store.append({ type: 'tool_call_requested', sessionId: s, payload: requested() }).callId;
    store.append({ type: 'tool_call_started', sessionId: s, callId: running, payload: started() });
    store.close(); // no endSession: the process "died"
    return { s, done, asking, running };
  }

  it('interrupts open calls, denies pending approvals and closes the session', () => {
    const { s, done, asking, running } = crashedServer();
    const store = openAuditStore({ path: t.dbPath });
    try {
      expect(store.recovery).toMatchObject({
        interruptedCalls: [
          { callId: asking, sessionId: s, stage: 'requested' },
          { callId: running, sessionId: s, stage: 'started' },
        ],
        deniedApprovals: [{ callId: asking, sessionId: s, approvalKey: sha('key') }],
        closedSessions: [s],
        liveSessions: [],
        chain: { ok: true },
      });
      expect(store.getCall(asking)?.approval).toMatchObject({ decision: 'denied', reason: 'server_restart' });
      expect(store.getCall(running)?.events.at(-1)).toMatchObject({
        type: 'tool_call_interrupted',
        payload: { reason: 'server_restart', stage: 'started' },
      });
      expect(store.getCall(done)?.call.status).toBe('ok');
      expect(store.sessionEvents(s, ['session_ended'])[0]?.payload).toEqual({
        reason: 'server_restart',
        interrupted_calls: 2,
      });
    } finally {
      store.close();
    }
    const again = openAuditStore({ path: t.dbPath });
    try {
      expect(again.recovery).toMatchObject({ interruptedCalls: [], deniedApprovals: [], closedSessions: [] });
    } finally {
      again.close();
    }
  });

  it('leaves alone the open sessions of a server that still runs', () => {
    const live = openAuditStore({ path: t.dbPath });
    const s = startSession(live);
    const callId = live.append({ type: 'tool_call_requested', sessionId: s, payload: requested() }).callId;
    const second = openAuditStore({ path: t.dbPath });
    try {
      expect(second.recovery).toMatchObject({ closedSessions: [], liveSessions: [s], interruptedCalls: [] });
      live.append({ type: 'tool_call_started', sessionId: s, callId, payload: started() });
    } finally {
      second.close();
      live.close();
    }
  });

  it('tells a gone process from a live one', () => {
    const self = { pid: process.pid, host: hostname() };
    const exited = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], {
      encoding: 'utf8',
    });
    expect(isOwnerAlive({ pid: Number(exited.stdout), host: self.host }, self)).toBe(false);
    expect(isOwnerAlive({ pid: process.pid, host: self.host }, self)).toBe(true);
    expect(isOwnerAlive({ pid: process.ppid, host: self.host }, self)).toBe(true);
    expect(isOwnerAlive({ pid: Number(exited.stdout), host: 'another-host' }, self)).toBe(true);
  });

  it('still opens a log whose chain is broken, and reports the bad row', () => {
    crashedServer();
    const db = new Database(t.dbPath);
    db.exec('DROP TRIGGER events_no_update; UPDATE events SET ts = ts + 1 WHERE event_id = 3');
    db.close();
    const store = openAuditStore({ path: t.dbPath });
    try {
      expect(store.recovery?.chain).toMatchObject({ ok: false, badEventId: 3, reason: 'hash_mismatch' });
      expect(store.recovery?.closedSessions.length).toBe(1);
    } finally {
      store.close();
    }
  });
});
