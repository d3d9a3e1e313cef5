import { SkillsError } from '../errors.js';
import { type ApprovalOutcome } from '../approvals/approval-decision.js';
import { interpretAnswer } from '../approvals/approval-request.js';
import { decisionEvents } from './call-events.js';
import { notPending, retryMismatch } from './call-refusals.js';
import type { Decisions } from './decide-call.js';
import type { RunnerCore } from './runner-core.js';
import type { Runner } from './runner-types.js';
import { isSameCall } from '../approvals/same-call.js';
import { askedOf } from './asked-call.js';
import { requestDigest } from './request-digest.js';
import { unseenAnswer } from './unseen-answer.js';
import { checkPasskey } from './passkey-check.js';

/** The steps that answer a call waiting for approval: the client's answer or retry, its cancel, the console's answer. */
export function answerCall(
  core: RunnerCore,
  { decide }: Pick<Decisions, 'decide'>,
): Pick<Runner, 'resume' | 'abandon' | 'recordAnswer'> {
  const { pending, signer } = core;

  const resume: Runner['resume'] = async (callId, info, answer, ctx, retry) => {
    const p = pending.get(callId);
    if (p === undefined) {
      // The answer came after skills-mcp stopped waiting (a modern client's retry): the refusal it got then.
      const timedOut = core.late.take(callId, info.id);
      if (timedOut !== undefined) return timedOut;
      // Or a retry for a call another server process asked.
      const elsewhere =
        retry === undefined ? undefined : await core.replicas().resume(callId, info, answer, ctx, retry);
      if (elsewhere !== undefined) return elsewhere;
    }
    if (p === undefined || p.session.info.id !== info.id || p.recording === true) return notPending();
    if (retry !== undefined && !isSameCall(askedOf(p.call), { requestSha256: requestDigest(retry) }))
      return retryMismatch(`${p.call.skill.name}/${p.call.script}`);
    if (p.approved) {
      // The decision is already durable (recordAnswer): run it now for the retrying client.
      pending.take(callId);
      return core.deps.audit().then((audit) => core.run(audit, p.session, p.call, callId, ctx));
    }
    // A decline or cancel too fast for a person: the client answered without showing the form.
    const unseen =
      ctx.channel === 'elicitation' ? unseenAnswer(answer, core.now() - p.askedAt, ctx.client) : undefined;
    const outcome: ApprovalOutcome =
      unseen === undefined ? interpretAnswer(answer) : { decision: 'denied', reason: 'answered_unseen' };
    return decide(callId, outcome, ctx.channel, ctx, true, unseen);
  };

  /** The client cancelled the tool call while its approval waited: recorded at once, distinctly, nothing runs. */
  const abandon: Runner['abandon'] = async (callId, info) => {
    const p = pending.get(callId);
    // An approval already recorded (console) stays for the client's next call.
    if (p === undefined || p.session.info.id !== info.id || p.recording === true || p.approved)
      return notPending();
    const { channel } = p;
    const cancelled = { decision: 'denied', reason: 'request_cancelled' } as const;
    return decide(callId, cancelled, channel, { canAsk: false, channel });
  };

  const recordAnswer: Runner['recordAnswer'] = async (callId, info, answer, channel) => {
    const p = pending.get(callId);
    if (p === undefined || p.session.info.id !== info.id || p.approved || p.recording === true) {
      throw new SkillsError('APPROVAL_DENIED', 'this approval is no longer pending');
    }
    const outcome = checkPasskey(
      core.config.approval,
      p.call,
      callId,
      interpretAnswer(answer),
      p.session.caller,
    );
    const s = p.session;
    if (
      (outcome.decision === 'approved' || outcome.decision === 'approved_for_session') &&
      !s.gate.isAborted()
    ) {
      const d = decisionEvents(s.gate, s.auditId, callId, p.call.bound.approvalKey, outcome, channel, {
        caller: s.caller,
        mac: signer.macFor(s.auditId, callId, p.call, outcome.decision),
      });
      const audit = await core.deps.audit();
      // Until the decision is durable, a retry or another answer finds the call taken (the write awaits).
      p.recording = true;
      try {
        await core.commit(audit, s, d.events, d.apply);
      } catch (e) {
        delete p.recording;
        // Another replica's console decided first: its decision holds.
        const won = await core.replicas().lostRecord(audit, p, callId, e);
        if (won === undefined) throw e;
        return won;
      }
      delete p.recording;
      p.approved = true;
      core.replicas().settle(callId);
      return { kind: 'approved' };
    }
    return { kind: 'closed', result: await decide(callId, outcome, channel, { canAsk: false, channel }) };
  };

  return { resume, abandon, recordAnswer };
}
