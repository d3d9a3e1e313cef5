import type { ApprovalOutcome } from '../approvals/approval-decision.js';
import { passkeyCovers } from '../approvals/passkey-covers.js';
import type { ApprovalConfig } from '../config/approval-schema.js';
import { isPasskeyRequired } from '../gate/passkey-required.js';
import type { PreparedCall } from './prepare-call.js';

/** Whether `approval.require` asks a passkey for this call. */
export const needsPasskey = (config: Pick<ApprovalConfig, 'require'>, call: PreparedCall): boolean =>
  isPasskeyRequired(config.require, { skill: call.skill.name, risk: call.risk.level });

/**
 * The outcome to apply, checked where a decision is applied: an approval of a call that needs a passkey, without
 * passkey evidence for exactly this call and decision (whatever path it came by), is a `passkey_required` refusal.
 */
export function checkPasskey(
  config: Pick<ApprovalConfig, 'require'>,
  call: PreparedCall,
  callId: string,
  outcome: ApprovalOutcome,
): ApprovalOutcome {
  if (outcome.decision !== 'approved' && outcome.decision !== 'approved_for_session') return outcome;
  if (!needsPasskey(config, call)) return outcome;
  const binding = {
    call_id: callId,
    approval_key: call.bound.approvalKey,
    bundle_sha256: call.bundle.sha256,
    input_sha256: call.bound.input.input_sha256,
    decision: outcome.decision,
  };
  return passkeyCovers(outcome.passkey, binding)
    ? outcome
    : { decision: 'denied', reason: 'passkey_required' };
}
