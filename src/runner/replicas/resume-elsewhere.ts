import type { CallLog } from '../../audit/call-log.js';
import { isStoppedRefusal } from '../../audit/is-stopped-refusal.js';
import { principalDigest } from '../../audit/principal-digest.js';
import { isSkillsError } from '../../errors.js';
import { type ApprovalOutcome } from '../../approvals/approval-decision.js';
import { interpretAnswer, type ApprovalAnswer } from '../../approvals/approval-request.js';
import { decisionEvents, finishedEvent } from '../call-events.js';
import { deniedFor, notPending, retryMismatch } from '../call-refusals.js';
import type { CallResult } from '../call-result.js';
import type { Decisions } from '../decide-call.js';
import { isDecidedElsewhere } from '../is-decided-elsewhere.js';
import type { LiveSession } from '../live-sessions.js';
import type { PreparedCall } from '../prepare-call.js';
import type { CallRequest } from '../call-request.js';
import type { RunnerCore } from '../runner-core.js';
import type { CallContext } from '../runner-types.js';
import { isSameCall } from '../../approvals/same-call.js';
import { askedOf } from '../asked-call.js';
import { requestDigest } from '../request-digest.js';
import { checkPasskey } from '../passkey-check.js';
import type { SessionInfo } from '../session.js';

/**
 * A retry for a call another server process asked (a log shared by replicas): the call is re-prepared from the
 * retry's own request and runs only when its request digest, approval key, input digest and
 * bundle are (`isSameCall`) the ones recorded when the person was asked. Deciding it is the claim: the log takes one decision per
 * call (checked in the append transaction), so of two replicas or two retries exactly one goes on. Undefined when
 * the log has no such call for this session.
 */
export async function resumeElsewhere(
  core: RunnerCore,
  decisions: Pick<Decisions, 'stopSession' | 'stoppedMeanwhile'>,
  catchUp: (audit: CallLog, s: LiveSession) => Promise<void>,
  r: { callId: string; info: SessionInfo; answer: ApprovalAnswer; ctx: CallContext; retry: CallRequest },
): Promise<CallResult | undefined> {
  const { callId, info, ctx } = r;
  const audit = await core.deps.audit();
  const sp = await audit.replicas?.pendingCall(callId);
  if (sp === undefined) return undefined;
  const principal = info.principal === undefined ? undefined : principalDigest(info.principal);
  const ours = sp.sessionId === info.id || sp.sessionId.startsWith(`${info.id}.`);
  if (!ours || sp.principalSha256 !== principal) return undefined;
  const s = await core.sessions.get(info);
  await catchUp(audit, s);
  const what = `${sp.skill ?? sp.tool}/${sp.script ?? ''}`;
  // What the person was asked about, whole (the args and the script's name too, which the key may leave out), by
  // the rule of a retry in one process. A call an older version asked has no digest: refused, it cannot be told
  // apart from another (the client asks anew, or its retry lands on the replica holding the call).
  if (!isSameCall(sp, { requestSha256: requestDigest(r.retry) })) return retryMismatch(what);
  let call: PreparedCall;
  try {
    call = await core.prepare(r.retry);
  } catch (e) {
    if (!isSkillsError(e)) throw e;
    return retryMismatch(what);
  }
  // And what binds it now (the catalog may have changed since): the key, the input, the bundle.
  if (!isSameCall(sp, { requestSha256: call.requestSha256, binding: askedOf(call) }))
    return retryMismatch(what);
  // A passkey (and four-eyes) requirement holds here as where the call was asked: the client's own answer never
  // approves such a call.
  const o: ApprovalOutcome = s.gate.isAborted()
    ? { decision: 'denied', reason: 'session_aborted' }
    : checkPasskey(core.config.approval, call, callId, interpretAnswer(r.answer), s.caller);
  const d = decisionEvents(s.gate, sp.sessionId, callId, sp.approvalKey, o, ctx.channel, {
    caller: s.caller,
    mac: core.signer.macFor(sp.sessionId, callId, call, o.decision),
  });
  const approved = o.decision === 'approved' || o.decision === 'approved_for_session';
  const events = approved
    ? d.events
    : [...d.events, finishedEvent(sp.sessionId, callId, 'denied', { code: 'APPROVAL_DENIED' })];
  try {
    await core.commit(audit, s, events, d.apply);
  } catch (e) {
    // Decided meanwhile (another retry, another replica, the asking one's timeout): this one is not the claim.
    if (isDecidedElsewhere(e)) return notPending();
    if (approved && isStoppedRefusal(e))
      return decisions.stoppedMeanwhile(audit, s, sp.sessionId, callId, call);
    throw e;
  }
  if (approved) return core.run(audit, { ...s, auditId: sp.sessionId }, call, callId, ctx);
  if (o.decision === 'abort') await decisions.stopSession(audit, s);
  return deniedFor(call, core.config, o.reason, callId);
}
