import type { ApprovalConfig } from '../config/approval-schema.js';
import type { ApprovalOutcome } from './approval-decision.js';
import type { PolicyDecision } from '../gate/policy.js';
import type { SessionState } from './session-state.js';

/**
 * What to do with a gated call before anyone is asked (step 4 of a gated call, see docs/architecture.md).
 * `run`/`refuse` carry the outcome to record as `approval_decided`; `ask` means: elicit now.
 */
export type GateOutcome =
  | { action: 'run'; outcome: ApprovalOutcome & { reason: 'rules' | 'cached' } }
  | {
      action: 'refuse';
      outcome: ApprovalOutcome & { reason: RefuseReason };
    }
  /** Ask in the approval console instead: only there can a passkey approve this call. */
  | { action: 'console' }
  | { action: 'ask' };

type RefuseReason =
  'rules' | 'loop_guard' | 'session_aborted' | 'no_approver' | 'passkey_required' | 'four_eyes_required';

/**
 * For a call `approval.require` asks a passkey for: `ready` (asked in the console, a passkey is enrolled),
 * `console` (asked elsewhere, but a console with an enrolled passkey runs: ask there), `missing` (no such console).
 */
export type PasskeyGate = 'ready' | 'console' | 'missing';

export interface GateInput {
  policy: Pick<PolicyDecision, 'decision'>;
  session: Pick<SessionState, 'check'>;
  approvalKey: string;
  /** True when a person can be asked: the client declared elicitation (per request) and it is not turned off. */
  canAsk: boolean;
  config: Pick<ApprovalConfig, 'fallback'>;
  /** Set when the call needs a passkey (see {@link PasskeyGate}). */
  passkey?: PasskeyGate;
  /** Set when the call needs four eyes: whether a signed-in caller made it (someone else must approve). */
  fourEyes?: { signedIn: boolean };
}

/**
 * Order: an aborted session refuses everything; a policy deny refuses; without an approver and
 * `fallback: deny` nothing runs (fail closed); a policy allow runs; then a session grant runs (`cached`),
 * a tripped loop guard refuses, and the rest is asked, or refused (`no_approver`) when no one can be asked.
 * A call that needs a passkey (or four eyes) is never run on a session grant ("Approve for this session" covers
 * only calls that need neither): unless a rule allows it, it is asked only in a console with an enrolled passkey: elsewhere it moves there, and without one it is refused (`passkey_required`) before anyone is
 * asked. A call that needs four eyes and has no signed-in caller is refused (`four_eyes_required`) likewise: no one
 * can be told apart from the caller.
 */
export function resolveGate(input: GateInput): GateOutcome {
  const { policy, session, approvalKey, canAsk, config, passkey, fourEyes } = input;
  // A call that needs a passkey (or four eyes) is never covered by a session grant: each needs its own assertion.
  const granted = session.check(approvalKey);
  const check = granted === 'cached' && (passkey !== undefined || fourEyes !== undefined) ? 'ask' : granted;
  if (check === 'session_aborted') return refuse('session_aborted');
  if (policy.decision === 'deny') return refuse('rules');
  const needsPerson = policy.decision !== 'allow' && check !== 'cached';
  if (fourEyes?.signedIn === false && needsPerson) return refuse('four_eyes_required');
  if (passkey !== undefined && passkey !== 'ready' && needsPerson)
    return passkey === 'console' ? { action: 'console' } : refuse('passkey_required');
  if (!canAsk && config.fallback === 'deny') return refuse('no_approver');
  if (policy.decision === 'allow')
    return { action: 'run', outcome: { decision: 'approved', reason: 'rules' } };
  if (check === 'cached') return { action: 'run', outcome: { decision: 'approved', reason: 'cached' } };
  if (check === 'loop_guard') return refuse('loop_guard');
  return canAsk ? { action: 'ask' } : refuse('no_approver');
}

function refuse(reason: RefuseReason): GateOutcome {
  return { action: 'refuse', outcome: { decision: 'denied', reason } };
}
