import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openAuditStore, type AuditStore } from '../../src/audit/index.js';
import { finished, gatedCall, requested, sha, startSession } from './helpers/sample-events.js';
import { tempDir } from './helpers/temp-dir.js';

describe('audit queries', () => {
  let t: ReturnType<typeof tempDir>;
  let store: AuditStore;
  let s1: string;
  let s2: string;
  let first: string;
  beforeEach(() => {
    t = tempDir();
    let clock = 1_700_000_000_000;
    let id = 0;
    store = openAuditStore({
      path: t.dbPath,
      now: () => clock++,
      newId: () => `id-${String(++id).padStart(4, '0')}`,
    });
    s1 = startSession(store);
    s2 = startSession(store);
    first = gatedCall(store, s1, sha('k'), 2);
    gatedCall(store, s2);
    store.appendMany([
      {
        type: 'tool_call_requested',
        sessionId: s2,
        callId: 'ro-1',
        payload: requested({ tool: 'read_skill_file', skill: 'docx', approval_key: null }),
      },
      { type: 'tool_call_finished', sessionId: s2, callId: 'ro-1', payload: finished() },
    ]);
  });
  afterEach(() => {
    store.close();
    t.cleanup();
  });

  it('lists calls oldest first, filtered by session and skill, limited to the most recent', () => {
    expect(store.listCalls().map((c) => c.callId)).toEqual([first, 'id-0004', 'ro-1']);
    expect(store.listCalls({ sessionId: s2 }).map((c) => c.callId)).toEqual(['id-0004', 'ro-1']);
    expect(store.listCalls({ skill: 'docx' }).map((c) => c.callId)).toEqual(['ro-1']);
    expect(store.listCalls({ sessionId: s1, skill: 'docx' })).toEqual([]);
    expect(store.listCalls({ limit: 2 }).map((c) => c.callId)).toEqual(['id-0004', 'ro-1']);
  });

  it('shows one call with its approval, artifacts and events', () => {
    const detail = store.getCall(first)!;
    expect(detail.call).toMatchObject({
      callId: first,
      sessionId: s1,
      skill: 'pdf',
      state: 'finished',
      status: 'ok',
      policyDecision: 'ask',
      approvalDecision: 'approved',
      approvalReason: 'user',
      exitCode: 0,
      durationMs: 12,
    });
    expect(detail.approval).toMatchObject({
      approvalKey: sha('k'),
      decision: 'approved',
      channel: 'elicitation',
    });
    expect(detail.artifacts.map((a) => a.path)).toEqual(['files/a0.txt', 'files/a1.txt']);
    expect(detail.events.map((e) => e.type)).toEqual([
      'tool_call_requested',
      'policy_decided',
      'approval_requested',
      'approval_decided',
      'tool_call_started',
      'tool_call_finished',
    ]);
    expect(store.getCall('nope')).toBeUndefined();
  });

  it('finds calls by id prefix', () => {
    expect(store.findCallIds('id-000')).toEqual([first, 'id-0004']);
    expect(store.findCallIds('ro')).toEqual(['ro-1']);
    expect(store.findCallIds('zz')).toEqual([]);
  });

  it('exports every event in chain order with its hashes', () => {
    const events = [...store.exportEvents()];
    expect(events.length).toBe(2 + 6 + 6 + 2);
    expect(events[0]).toMatchObject({ event_id: 1, type: 'session_started', call_id: null });
    for (let i = 1; i < events.length; i++) expect(events[i]!.ts).toBeGreaterThan(events[i - 1]!.ts);
    expect(events.at(-1)).toMatchObject({ type: 'tool_call_finished', call_id: 'ro-1' });
    expect(Object.keys(events[0]!).sort()).toEqual([
      'call_id',
      'event_id',
      'hash',
      'payload',
      'prev_hash',
      'session_id',
      'ts',
      'type',
    ]);
  });
});
