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
      outcome: ApprovalOutcome & { reason: 'rules' | 'loop_guard' | 'session_aborted' | 'no_approver' };
    }
  | { action: 'ask' };

export interface GateInput {
  policy: Pick<PolicyDecision, 'decision'>;
  session: Pick<SessionState, 'check'>;
  approvalKey: string;
  /** True when a person can be asked: the client declared elicitation (per request) and it is not turned off. */
  canAsk: boolean;
  config: Pick<ApprovalConfig, 'fallback'>;
}

/**
 * Order: an aborted session refuses everything; a policy deny refuses; without an approver and
 * `fallback: deny` nothing runs (fail closed); a policy allow runs; then a session grant runs (`cached`),
 * a tripped loop guard refuses, and the rest is asked, or refused (`no_approver`) when no one can be asked.
 */
export function resolveGate({ policy, session, approvalKey, canAsk, config }: GateInput): GateOutcome {
  const check = session.check(approvalKey);
  if (check === 'session_aborted') return refuse('session_aborted');
  if (policy.decision === 'deny') return refuse('rules');
  if (!canAsk && config.fallback === 'deny') return refuse('no_approver');
  if (policy.decision === 'allow')
    return { action: 'run', outcome: { decision: 'approved', reason: 'rules' } };
  if (check === 'cached') return { action: 'run', outcome: { decision: 'approved', reason: 'cached' } };
  if (check === 'loop_guard') return refuse('loop_guard');
  return canAsk ? { action: 'ask' } : refuse('no_approver');
}

function refuse(reason: 'rules' | 'loop_guard' | 'session_aborted' | 'no_approver'): GateOutcome {
  return { action: 'refuse', outcome: { decision: 'denied', reason } };
}
