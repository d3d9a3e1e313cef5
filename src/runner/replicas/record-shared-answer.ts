import type { CallLog } from '../../audit/call-log.js';
import { isStoppedRefusal } from '../../audit/is-stopped-refusal.js';
import type { Config } from '../../config/config-schema.js';
import { isSameCall } from '../../approvals/same-call.js';
import { SkillsError } from '../../errors.js';
import { isDecidedElsewhere } from '../is-decided-elsewhere.js';
import { type ApprovalOutcome } from '../../approvals/approval-decision.js';
import { interpretAnswer, type ApprovalAnswer } from '../../approvals/approval-request.js';
import { createSessionState } from '../../approvals/session-state.js';
import { decisionEvents, finishedEvent } from '../call-events.js';
import type { DecisionSigner } from '../decision-signer.js';
import type { SeenCall, SharedRecorded } from '../runner-types.js';
import { passkeyCovers } from '../../approvals/passkey-covers.js';
import { isFourEyesRequired } from '../../gate/four-eyes-required.js';
import type { SharedPending } from '../../audit/replica-log.js';
import { checkFourEyes } from '../passkey-check.js';

const approving = (o: ApprovalOutcome) => o.decision === 'approved' || o.decision === 'approved_for_session';

/**
 * A console's answer for a call waiting on another server process (see `Runner.recordSharedAnswer`). The call must
 * still wait in the log for a console decision, and what the person was shown must be what was recorded when it
 * was asked (session, approval key, input digest, bundle); else nothing is written. The decision is signed
 * (`approval_decided.mac`, see `DecisionSigner`) and recorded in the call's own audit session with the gate of its
 * session family as the log holds it (verified grants, denials, loop guard, a stop: a stopped family turns an
 * approval into a refusal). Recording it is the claim: the log takes one decision per call. A refusal is recorded
 * with the call's end (it ran nothing); an approval leaves the run to the process that holds the call.
 */
export async function recordSharedAnswer(
  audit: CallLog,
  config: Config,
  signer: DecisionSigner,
  callId: string,
  seen: SeenCall,
  answer: ApprovalAnswer,
): Promise<SharedRecorded> {
  const sp = await audit.replicas?.pendingCall(callId);
  if (sp === undefined || sp.channel !== 'console') return { kind: 'gone' };
  if (sp.sessionId !== seen.sessionId || !isSameCall(sp, { binding: seen })) return { kind: 'mismatch' };
  const family = sp.sessionId.split('.')[0]!;
  const gate = createSessionState(
    { loopGuard: config.approval.loop_guard },
    ((await audit.replicas?.gateEventsOf(family, 0)) ?? []).filter((ev) => signer.mayApply(ev)),
  );
  const stopped: ApprovalOutcome = { decision: 'denied', reason: 'session_aborted' };
  const o = gate.isAborted() ? stopped : passkeyChecked(config, callId, sp, interpretAnswer(answer));
  const write = (outcome: ApprovalOutcome) => {
    // Signed: the process holding the call acts only on a decision whose MAC verifies against it.
    const mac = signer.mac({ ...sp, decision: outcome.decision });
    if (mac === undefined)
      throw new SkillsError('AUDIT_FAILED', 'no shared secret to sign the decision with');
    const d = decisionEvents(gate, sp.sessionId, callId, sp.approvalKey, outcome, 'console', { mac });
    const end = finishedEvent(sp.sessionId, callId, 'denied', { code: 'APPROVAL_DENIED' });
    return audit.appendMany(approving(outcome) ? d.events : [...d.events, end]);
  };
  try {
    await write(o);
  } catch (e) {
    if (isDecidedElsewhere(e)) return { kind: 'gone' };
    if (!(approving(o) && isStoppedRefusal(e))) throw e;
    // Stopped on some replica between the look at the family's stops and the write.
    try {
      await write(stopped);
    } catch (e2) {
      if (isDecidedElsewhere(e2)) return { kind: 'gone' };
      throw e2;
    }
    return { kind: 'stopped' };
  }
  return approving(o) ? { kind: 'approved' } : o === stopped ? { kind: 'stopped' } : { kind: 'denied' };
}

/**
 * With a passkey requirement in the config, an approval for a call of another process counts only with passkey
 * evidence for exactly that call (this process does not know the call's skill and risk: it asks it of every one).
 */
function passkeyChecked(
  config: Config,
  callId: string,
  sp: Pick<SharedPending, 'approvalKey' | 'bundleSha256' | 'inputSha256' | 'skill' | 'caller'>,
  o: ApprovalOutcome,
): ApprovalOutcome {
  if (!approving(o) || config.approval.require === 'none') return o;
  const binding = {
    call_id: callId,
    approval_key: sp.approvalKey,
    input_sha256: sp.inputSha256,
    decision: o.decision,
  };
  if (sp.bundleSha256 === null || !passkeyCovers(o.passkey, { ...binding, bundle_sha256: sp.bundleSha256 }))
    return { decision: 'denied', reason: 'passkey_required' };
  // Four eyes are judged here too (the skill is in the log): a self-approval is refused, not left to time out, and
  // an approval that stands is recorded as a four-eyes one, so that `audit verify` holds it to them.
  if (sp.skill === null || !isFourEyesRequired(config.approval.require, sp.skill)) return o;
  const checked = checkFourEyes(o, sp.caller);
  return checked === o && o.passkey !== undefined
    ? { ...o, passkey: { ...o.passkey, four_eyes: true } }
    : checked;
}
