import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  openAuditStore,
  type ApprovalDecision,
  type ApprovalReason,
  type AuditStore,
} from '../../src/audit/index.js';
import { finished, requested, sha, startSession } from './helpers/sample-events.js';
import { tempDir } from './helpers/temp-dir.js';

describe('session state for the gate', () => {
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

  /** A call whose approval ends with `decision`/`reason`, then finishes (denied calls never start). */
  function decide(key: string, decision: ApprovalDecision, reason: ApprovalReason, sessionId = s): string {
    const callId = store.append({
      type: 'tool_call_requested',
      sessionId,
      payload: requested({ approval_key: key }),
    }).callId;
    const asked = reason === 'user' || reason === 'declined';
    if (asked)
      store.append({
        type: 'approval_requested',
        sessionId,
        callId,
        payload: { approval_key: key, channel: 'elicitation' },
      });
    store.append({
      type: 'approval_decided',
      sessionId,
      callId,
      payload: { approval_key: key, decision, reason, channel: asked ? 'elicitation' : 'session' },
    });
    const ok = decision === 'approved' || decision === 'approved_for_session';
    store.append({
      type: 'tool_call_finished',
      sessionId,
      callId,
      payload: finished(
        ok ? {} : { status: 'denied', exit_code: null, stdout_sha256: null, stdout_bytes: 0 },
      ),
    });
    return callId;
  }

  it('rebuilds grants, denial counts, loop-guarded keys and the aborted flag from events', () => {
    const [a, b, c] = [sha('a'), sha('b'), sha('c')];
    decide(a, 'approved_for_session', 'user');
    decide(a, 'approved', 'cached');
    decide(b, 'denied', 'user');
    const second = decide(b, 'denied', 'declined');
    store.append({
      type: 'loop_guard_tripped',
      sessionId: s,
      callId: second,
      payload: { approval_key: b, denials: 2 },
    });
    decide(b, 'denied', 'loop_guard');
    decide(c, 'approved', 'user');
    expect(store.sessionState(s)).toEqual({
      sessionId: s,
      exists: true,
      open: true,
      aborted: false,
      grants: [a],
      denials: { [b]: 2 },
      loopGuarded: [b],
    });

    const aborting = decide(c, 'abort', 'user');
    store.append({
      type: 'session_aborted',
      sessionId: s,
      callId: aborting,
      payload: { approval_key: c, channel: 'elicitation' },
    });
    decide(a, 'denied', 'session_aborted');
    expect(store.sessionState(s)).toMatchObject({ aborted: true, denials: { [b]: 2 } });
    store.endSession(s, 'client_closed');
    expect(store.sessionState(s)).toMatchObject({ exists: true, open: false });
  });

  it('keeps sessions apart', () => {
    const other = startSession(store);
    decide(sha('a'), 'approved_for_session', 'user', other);
    expect(store.sessionState(s).grants).toEqual([]);
    expect(store.sessionState(other).grants).toEqual([sha('a')]);
    expect(store.sessionState('missing')).toMatchObject({ exists: false, open: false });
  });

  it('lists a session’s events by type in commit order', () => {
    decide(sha('a'), 'denied', 'user');
    decide(sha('b'), 'approved', 'user');
    const decided = store.sessionEvents(s, ['approval_decided']);
    expect(decided.map((e) => e.payload.decision)).toEqual(['denied', 'approved']);
    expect(store.sessionEvents(s).map((e) => e.type)[0]).toBe('session_started');
  });
});
