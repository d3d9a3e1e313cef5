import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openAuditStore, type AuditStore } from '../../src/audit/index.js';
import { finished, requested, startSession, started } from './helpers/sample-events.js';
import { tempDir } from './helpers/temp-dir.js';

describe('audit group commit (appendAsync)', () => {
  let t: ReturnType<typeof tempDir>;
  let store: AuditStore;
  let s: string;
  beforeEach(() => {
    t = tempDir();
    store = openAuditStore({ path: t.dbPath });
    s = startSession(store);
  });
  afterEach(() => {
    store.close();
    t.cleanup();
  });

  it('settles each promise only when its event is committed, sharing one transaction', async () => {
    const pending = Array.from({ length: 10 }, () =>
      store.appendAsync({ type: 'tool_call_requested', sessionId: s, payload: requested() }),
    );
    const other = new Database(t.dbPath, { readonly: true });
    try {
      const count = () => (other.prepare('SELECT COUNT(*) AS n FROM events').get() as { n: number }).n;
      expect(count()).toBe(1); // queued, not yet written
      const events = await Promise.all(pending);
      expect(count()).toBe(11);
      expect(events.map((e) => e.eventId)).toEqual([2, 3, 4, 5, 6, 7, 8, 9, 10, 11]);
    } finally {
      other.close();
    }
    expect(store.verify()).toMatchObject({ ok: true, events: 11 });
  });

  it('rejects a refused event alone; the others in its batch commit', async () => {
    const callId = store.append({ type: 'tool_call_requested', sessionId: s, payload: requested() }).callId;
    const results = await Promise.allSettled([
      store.appendAsync({ type: 'tool_call_started', sessionId: s, callId, payload: started() }),
      store.appendAsync({ type: 'tool_call_started', sessionId: s, callId, payload: started() }),
      store.appendAsync({
        type: 'tool_call_requested',
        sessionId: s,
        payload: requested({ input_sha256: 'raw value' }),
      }),
      store.appendAsync({ type: 'tool_call_finished', sessionId: s, callId, payload: finished() }),
    ]);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'rejected', 'fulfilled']);
    expect(results[1]).toMatchObject({
      reason: { code: 'AUDIT_FAILED', message: expect.stringMatching(/already started/) },
    });
    expect(store.getCall(callId)?.events.map((e) => e.type)).toEqual([
      'tool_call_requested',
      'tool_call_started',
      'tool_call_finished',
    ]);
    expect(store.verify()).toMatchObject({ ok: true, events: 4 });
  });

  it('commits queued events on close instead of dropping them', async () => {
    const queued = store.appendAsync({ type: 'tool_call_requested', sessionId: s, payload: requested() });
    store.close();
    const e = await queued;
    const reopened = openAuditStore({ path: t.dbPath, recover: false });
    try {
      expect(reopened.getEvent(e.eventId)?.hash).toBe(e.hash);
    } finally {
      reopened.close();
    }
  });
});
