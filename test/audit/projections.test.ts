import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openAuditStore, type AuditStore } from '../../src/audit/index.js';
import { finished, gatedCall, requested, sha, startSession, started } from './helpers/sample-events.js';
import { tempDir } from './helpers/temp-dir.js';

/** A varied log: gated calls with artifacts, read-only calls, denials, a crash with a pending approval. */
function workload(path: string): void {
  const crashed = openAuditStore({ path, owner: { pid: 999_999, host: 'gone' } });
  const c = startSession(crashed);
  gatedCall(crashed, c, sha('k1'), 2);
  const pending = crashed.append({ type: 'tool_call_requested', sessionId: c, payload: requested() }).callId;
  crashed.append({
    type: 'approval_requested',
    sessionId: c,
    callId: pending,
    payload: { approval_key: sha('key'), channel: 'terminal' },
  });
  const running = crashed.append({
    type: 'tool_call_requested',
    sessionId: c,
    payload: requested({ approval_key: null }),
  }).callId;
  crashed.append({ type: 'tool_call_started', sessionId: c, callId: running, payload: started() });
  crashed.close();

  const store = openAuditStore({ path, isOwnerAlive: (o) => o.host !== 'gone' });
  const s = startSession(store);
  for (let i = 0; i < 5; i++) gatedCall(store, s, sha(`k${i % 2}`), i);
  for (let i = 0; i < 5; i++) {
    const callId = `ro-${i}`;
    store.appendMany([
      {
        type: 'tool_call_requested',
        sessionId: s,
        callId,
        payload: requested({ tool: 'read_skill_file', approval_key: null, read_only: true }),
      },
      { type: 'tool_call_finished', sessionId: s, callId, payload: finished() },
    ]);
  }
  const denied = store.append({ type: 'tool_call_requested', sessionId: s, payload: requested() }).callId;
  store.append({
    type: 'policy_decided',
    sessionId: s,
    callId: denied,
    payload: {
      decision: 'deny',
      rule: 'rules.deny[0]',
      risk: { level: 'high', code: 'curl_pipe_sh', reason: 'pipes a download into sh' },
    },
  });
  store.append({
    type: 'tool_call_finished',
    sessionId: s,
    callId: denied,
    payload: finished({
      status: 'denied',
      exit_code: null,
      stdout_sha256: null,
      stdout_bytes: 0,
      error_code: 'POLICY_DENIED',
    }),
  });
  store.append({
    type: 'session_error',
    sessionId: s,
    callId: denied,
    payload: { code: 'INTERNAL', ref: 'r-1' },
  });
  store.append({ type: 'tool_call_requested', sessionId: s, payload: requested() });
  store.endSession(s, 'shutdown');
  store.close();
}

describe('audit projections', () => {
  let t: ReturnType<typeof tempDir>;
  let store: AuditStore;
  beforeEach(() => {
    t = tempDir();
    workload(t.dbPath);
    store = openAuditStore({ path: t.dbPath });
  });
  afterEach(() => {
    store.close();
    t.cleanup();
  });

  it('rebuilt from events equal the incrementally maintained ones', () => {
    const incremental = store.snapshotProjections();
    expect(incremental.calls.length).toBe(1 + 2 + 5 + 5 + 2);
    expect(incremental.artifacts.length).toBe(2 + 0 + 1 + 2 + 3 + 4);
    expect(incremental.approvals.length).toBe(1 + 1 + 5);
    const replayed = store.rebuildProjections();
    expect(replayed).toBe([...store.exportEvents()].length);
    expect(store.snapshotProjections()).toEqual(incremental);
    expect(store.verify().ok).toBe(true);
  });

  it('restores damaged projections from events', () => {
    const before = store.snapshotProjections();
    const db = new Database(t.dbPath);
    try {
      db.exec(
        "DELETE FROM artifacts; UPDATE calls SET status = 'ok', state = 'finished'; DELETE FROM approvals WHERE rowid % 2 = 0",
      );
    } finally {
      db.close();
    }
    expect(store.snapshotProjections()).not.toEqual(before);
    store.rebuildProjections();
    expect(store.snapshotProjections()).toEqual(before);
  });

  it('gives every call exactly one terminal event', () => {
    const terminals = new Map<string, number>();
    for (const e of store.exportEvents()) {
      if (e.type === 'tool_call_finished' || e.type === 'tool_call_interrupted') {
        terminals.set(e.call_id!, (terminals.get(e.call_id!) ?? 0) + 1);
      }
    }
    const calls = store.listCalls();
    expect(calls.length).toBe(15);
    for (const c of calls) expect(terminals.get(c.callId)).toBe(1);
  });
});
