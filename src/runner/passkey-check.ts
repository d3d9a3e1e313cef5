import type { ApprovalOutcome } from '../approvals/approval-decision.js';
import { passkeyCovers } from '../approvals/passkey-covers.js';
import type { CallerRecord } from '../audit/caller-record-schema.js';
import type { ApprovalConfig } from '../config/approval-schema.js';
import { isFourEyesRequired } from '../gate/four-eyes-required.js';
import { isPasskeyRequired } from '../gate/passkey-required.js';
import { isSamePerson } from '../approvals/is-same-person.js';
import type { PreparedCall } from './prepare-call.js';

/** Whether `approval.require` asks a passkey for this call. */
export const needsPasskey = (config: Pick<ApprovalConfig, 'require'>, call: PreparedCall): boolean =>
  isPasskeyRequired(config.require, { skill: call.skill.name, risk: call.risk.level });

/** Whether `approval.require` asks four eyes for this call: a passkey of someone other than the caller. */
export const needsFourEyes = (config: Pick<ApprovalConfig, 'require'>, call: PreparedCall): boolean =>
  isFourEyesRequired(config.require, call.skill.name);

/**
 * The outcome to apply, checked where a decision is applied: an approval of a call that needs a passkey, without
 * passkey evidence for exactly this call and decision (whatever path it came by), is a `passkey_required` refusal.
 * Where four eyes are required, the passkey's enrolment must name a subject and the call a signed-in `caller`
 * (else `four_eyes_required`), and they must be different people (else `self_approval`, naming the passkey's
 * person).
 */
export function checkPasskey(
  config: Pick<ApprovalConfig, 'require'>,
  call: PreparedCall,
  callId: string,
  outcome: ApprovalOutcome,
  caller: CallerRecord | undefined,
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
  if (!passkeyCovers(outcome.passkey, binding)) return { decision: 'denied', reason: 'passkey_required' };
  if (!needsFourEyes(config, call)) return outcome;
  // Recorded with the evidence, so that `audit verify` holds the approval to four eyes too.
  const checked = checkFourEyes(outcome, caller);
  return checked === outcome && outcome.passkey !== undefined
    ? { ...outcome, passkey: { ...outcome.passkey, four_eyes: true } }
    : checked;
}

/**
 * A passkey approval of a call that needs four eyes: it stands when the passkey's enrolment names a subject, the
 * call a signed-in `caller`, and they are different people; else the refusal to record instead.
 */
export function checkFourEyes(outcome: ApprovalOutcome, caller: CallerRecord | undefined): ApprovalOutcome {
  const person = outcome.passkey?.person;
  // A blank subject names nobody: no one can be told apart from the caller by it.
  if (caller === undefined || person?.subject === undefined || person.subject.trim() === '')
    return { decision: 'denied', reason: 'four_eyes_required' };
  return isSamePerson(caller, person.subject)
    ? { decision: 'denied', reason: 'self_approval', person }
    : outcome;
}
