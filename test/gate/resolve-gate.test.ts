import { describe, expect, it } from 'vitest';
import type { PolicyAction } from '../../src/config/approval-schema.js';
import { resolveGate } from '../../src/approvals/resolve-gate.js';
import type { SessionCheck } from '../../src/approvals/session-state.js';

type Fallback = 'deny' | 'rules-only';
const gate = (policy: PolicyAction, check: SessionCheck, canAsk: boolean, fallback: Fallback = 'deny') =>
  resolveGate({
    policy: { decision: policy },
    session: { check: () => check },
    approvalKey: 'k',
    canAsk,
    config: { fallback },
  });

describe('resolveGate', () => {
  it.each<[PolicyAction, SessionCheck, boolean, Fallback, string, string | undefined]>([
    ['allow', 'ask', true, 'deny', 'run', 'rules'],
    ['deny', 'ask', true, 'deny', 'refuse', 'rules'],
    ['ask', 'ask', true, 'deny', 'ask', undefined],
    ['ask', 'cached', true, 'deny', 'run', 'cached'],
    ['ask', 'loop_guard', true, 'deny', 'refuse', 'loop_guard'],
    ['ask', 'session_aborted', true, 'deny', 'refuse', 'session_aborted'],
    ['allow', 'session_aborted', true, 'deny', 'refuse', 'session_aborted'],
    ['deny', 'session_aborted', true, 'deny', 'refuse', 'session_aborted'],
    // no one can be asked
    ['ask', 'ask', false, 'deny', 'refuse', 'no_approver'],
    ['allow', 'ask', false, 'deny', 'refuse', 'no_approver'],
    ['deny', 'ask', false, 'deny', 'refuse', 'rules'],
    ['allow', 'ask', false, 'rules-only', 'run', 'rules'],
    ['ask', 'ask', false, 'rules-only', 'refuse', 'no_approver'],
    ['deny', 'ask', false, 'rules-only', 'refuse', 'rules'],
  ])(
    'policy %s, session %s, canAsk %s, fallback %s → %s (%s)',
    (policy, check, canAsk, fallback, action, reason) => {
      const out = gate(policy, check, canAsk, fallback);
      expect(out.action).toBe(action);
      expect('outcome' in out ? out.outcome.reason : undefined).toBe(reason);
      if (out.action === 'run') expect(out.outcome.decision).toBe('approved');
      if (out.action === 'refuse') expect(out.outcome.decision).toBe('denied');
    },
  );

  it('refuses a four-eyes call without a signed-in caller before asking, unless a rule runs it (a session grant does not)', () => {
    const fourEyes = (policy: PolicyAction, check: SessionCheck, signedIn: boolean) =>
      resolveGate({
        policy: { decision: policy },
        session: { check: () => check },
        approvalKey: 'k',
        canAsk: true,
        config: { fallback: 'deny' },
        passkey: 'ready',
        fourEyes: { signedIn },
      });
    expect(fourEyes('ask', 'ask', false)).toEqual({
      action: 'refuse',
      outcome: { decision: 'denied', reason: 'four_eyes_required' },
    });
    expect(fourEyes('ask', 'ask', true)).toEqual({ action: 'ask' });
    expect(fourEyes('allow', 'ask', false).action).toBe('run');
    expect(fourEyes('ask', 'cached', false)).toMatchObject({ outcome: { reason: 'four_eyes_required' } });
    expect(fourEyes('ask', 'cached', true)).toEqual({ action: 'ask' });
    expect(fourEyes('deny', 'ask', false)).toMatchObject({ outcome: { reason: 'rules' } });
  });

  it('asks again for a call that needs a passkey although the session holds a grant for its key', () => {
    const gate = (passkey: 'ready' | 'console' | 'missing', check: SessionCheck) =>
      resolveGate({
        policy: { decision: 'ask' },
        session: { check: () => check },
        approvalKey: 'k',
        canAsk: true,
        config: { fallback: 'deny' },
        passkey,
      });
    expect(gate('ready', 'cached')).toEqual({ action: 'ask' });
    expect(gate('console', 'cached')).toEqual({ action: 'console' });
    expect(gate('missing', 'cached')).toMatchObject({ outcome: { reason: 'passkey_required' } });
  });
});
