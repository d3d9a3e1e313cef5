import { describe, expect, it } from 'vitest';
import type { ApprovalOutcome } from '../../src/approvals/approval-decision.js';
import { createSessionState, type SessionEvent } from '../../src/approvals/session-state.js';

const K1 = '1'.repeat(64);
const K2 = '2'.repeat(64);
const denied: ApprovalOutcome = { decision: 'denied', reason: 'user' };

describe('createSessionState', () => {
  it('asks for an unknown key', () => {
    expect(createSessionState({ loopGuard: 2 }).check(K1)).toBe('ask');
  });

  it('trips the loop guard on the 2nd denial of a key, and only for that key', () => {
    const s = createSessionState({ loopGuard: 2 });
    expect(s.record(K1, denied).map((e) => e.type)).toEqual(['approval_decided']);
    expect(s.check(K1)).toBe('ask');
    expect(s.record(K1, { decision: 'denied', reason: 'declined' })).toEqual([
      { type: 'approval_decided', payload: { approval_key: K1, decision: 'denied', reason: 'declined' } },
      { type: 'loop_guard_tripped', payload: { approval_key: K1 } },
    ]);
    expect(s.check(K1)).toBe('loop_guard');
    expect(s.check(K2)).toBe('ask');
  });

  it.each([
    ['user', true],
    ['declined', true],
    ['cancelled', true],
    ['timeout', true],
    ['invalid_response', false],
    ['elicitation_error', false],
    ['no_approver', false],
    ['rules', false],
    ['loop_guard', false],
  ] as const)('counts a denial with reason %s towards the loop guard: %s', (reason, counts) => {
    const s = createSessionState({ loopGuard: 1 });
    s.record(K1, { decision: 'denied', reason });
    expect(s.check(K1)).toBe(counts ? 'loop_guard' : 'ask');
  });

  it('honours loop_guard N', () => {
    const s = createSessionState({ loopGuard: 3 });
    s.record(K1, denied);
    s.record(K1, denied);
    expect(s.check(K1)).toBe('ask');
    expect(s.record(K1, denied).map((e) => e.type)).toContain('loop_guard_tripped');
    expect(s.check(K1)).toBe('loop_guard');
  });

  it('never trips with loop_guard 0', () => {
    const s = createSessionState({ loopGuard: 0 });
    for (let i = 0; i < 5; i++) expect(s.record(K1, denied)).toHaveLength(1);
    expect(s.check(K1)).toBe('ask');
  });

  it('grants approved_for_session per key; approved once grants nothing', () => {
    const s = createSessionState({ loopGuard: 2 });
    s.record(K1, { decision: 'approved_for_session', reason: 'user' });
    s.record(K2, { decision: 'approved', reason: 'user' });
    expect([s.check(K1), s.check(K2)]).toEqual(['cached', 'ask']);
  });

  it('abort refuses every later call, granted ones too, and is recorded once', () => {
    const s = createSessionState({ loopGuard: 2 });
    s.record(K1, { decision: 'approved_for_session', reason: 'user' });
    expect(s.record(K2, { decision: 'abort', reason: 'user' }).map((e) => e.type)).toEqual([
      'approval_decided',
      'session_aborted',
    ]);
    expect([s.check(K1), s.check(K2), s.isAborted()]).toEqual(['session_aborted', 'session_aborted', true]);
    expect(s.record(K2, { decision: 'abort', reason: 'user' }).map((e) => e.type)).toEqual([
      'approval_decided',
    ]);
  });

  it('eventsFor does not change the state (write-ahead: write, then apply)', () => {
    const s = createSessionState({ loopGuard: 1 });
    const events = s.eventsFor(K1, denied);
    expect(s.check(K1)).toBe('ask');
    events.forEach((e) => s.apply(e));
    expect(s.check(K1)).toBe('loop_guard');
  });

  it('rebuilds from the audit events to the same state as live', () => {
    const live = createSessionState({ loopGuard: 2 });
    const log: SessionEvent[] = [];
    const steps: [string, ApprovalOutcome][] = [
      [K1, denied],
      [K2, { decision: 'approved_for_session', reason: 'user' }],
      [K1, { decision: 'denied', reason: 'timeout' }],
      [K2, { decision: 'approved', reason: 'cached' }],
      ['3'.repeat(64), { decision: 'denied', reason: 'cancelled' }],
      [K1, { decision: 'denied', reason: 'loop_guard' }],
      ['4'.repeat(64), { decision: 'abort', reason: 'user' }],
    ];
    for (const [key, outcome] of steps) log.push(...live.record(key, outcome));
    const noise = [
      { type: 'session_started', payload: { client: 'x' } },
      { type: 'tool_call_finished', payload: null },
      { type: 'approval_decided', payload: { approval_key: K2, decision: 'bogus', reason: 'user' } },
    ];
    const rebuilt = createSessionState({ loopGuard: 2 }, [noise[0]!, ...log, ...noise.slice(1)]);
    expect(rebuilt.snapshot()).toEqual(live.snapshot());
    expect(live.snapshot()).toEqual({
      aborted: true,
      grants: [K2],
      denials: { [K1]: 2, ['3'.repeat(64)]: 1 },
      loopGuarded: [K1],
    });
  });

  it('stays loop-guarded when the loop_guard_tripped event was lost in a crash', () => {
    const s = createSessionState({ loopGuard: 2 }, [
      { type: 'approval_decided', payload: { approval_key: K1, decision: 'denied', reason: 'user' } },
      { type: 'approval_decided', payload: { approval_key: K1, decision: 'denied', reason: 'declined' } },
    ]);
    expect(s.check(K1)).toBe('loop_guard');
  });

  it('keeps a tripped guard from the log even with fewer denials', () => {
    const s = createSessionState({ loopGuard: 2 }, [
      { type: 'loop_guard_tripped', payload: { approval_key: K1 } },
    ]);
    expect(s.isLoopGuarded(K1)).toBe(true);
  });

  it('keeps no module-level state: two sessions are independent', () => {
    const a = createSessionState({ loopGuard: 1 });
    const b = createSessionState({ loopGuard: 1 });
    a.record(K1, { decision: 'abort', reason: 'user' });
    expect([a.check(K2), b.check(K2)]).toEqual(['session_aborted', 'ask']);
  });
});
