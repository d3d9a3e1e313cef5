import type { CallLog } from '../audit/call-log.js';
import { isStoppedRefusal } from '../audit/is-stopped-refusal.js';
import type { ApprovalChannel } from '../audit/approval-payload-schemas.js';
import { SkillsError } from '../errors.js';
import { type ApprovalOutcome } from '../approvals/approval-decision.js';
import { refusalMessage, type UnseenAnswer } from '../approvals/refusal-message.js';
import { decisionEvents, finishedEvent } from './call-events.js';
import { deniedFor, notPending, refusalContext } from './call-refusals.js';
import { refused, type CallResult } from './call-result.js';
import { isDecidedElsewhere } from './is-decided-elsewhere.js';
import { checkPasskey } from './passkey-check.js';
import type { LiveSession } from './live-sessions.js';
import type { PreparedCall } from './prepare-call.js';
import type { RunnerCore } from './runner-core.js';
import type { CallContext } from './runner-types.js';

const STOPPED = { decision: 'denied', reason: 'session_aborted' } as const;

export interface Decisions {
  /**
   * Applies an answer (or its absence) to a pending approval. Takes it out of `pending` first: never runs twice.
   * `held`: a request waits for the result (it runs the call when approved elsewhere meanwhile).
   */
  decide(
    callId: string,
    outcome: ApprovalOutcome,
    channel: ApprovalChannel,
    ctx: CallContext,
    held?: boolean,
    unseen?: UnseenAnswer,
  ): Promise<CallResult>;
  /**
   * The log refused an approval because the session was stopped (on another replica) between the look at the
   * stops and the decision (the check under the chain lock): the call is denied as stopped, nothing is run.
   */
  stoppedMeanwhile(
    audit: CallLog,
    s: LiveSession,
    auditId: string,
    callId: string,
    call: PreparedCall,
  ): Promise<CallResult>;
  /**
   * "Deny and stop": every other approval of the session still waiting, or approved but not yet claimed by a
   * retry, is closed unrun; the session refuses every later call.
   */
  stopSession(audit: CallLog, s: LiveSession): Promise<void>;
  /** The approval's time is up: denied as `timeout` (or, approved but never claimed, ended unrun). */
  expire(callId: string): Promise<void>;
}

export function createDecisions(core: RunnerCore): Decisions {
  const { config, signer, pending, log } = core;
  const catchUp = (audit: CallLog, s: LiveSession) =>
    core
      .replicas()
      .catchUp(audit, s)
      .catch((err: unknown) => log.warn({ err }, 'could not read other replicas’ stops'));

  const stoppedMeanwhile: Decisions['stoppedMeanwhile'] = async (audit, s, auditId, callId, call) => {
    const d = decisionEvents(s.gate, auditId, callId, call.bound.approvalKey, STOPPED, 'session', {
      caller: s.caller,
      mac: signer.macFor(auditId, callId, call, STOPPED.decision),
    });
    await audit.appendMany([
      ...d.events,
      finishedEvent(auditId, callId, 'denied', { code: 'APPROVAL_DENIED' }),
    ]);
    await catchUp(audit, s);
    return deniedFor(call, config, 'session_aborted', callId);
  };

  const stopSession: Decisions['stopSession'] = async (audit, s) => {
    for (const [id, p] of pending.ofSession(s.info.id)) {
      pending.take(id);
      const events = p.approved
        ? []
        : decisionEvents(s.gate, s.auditId, id, p.call.bound.approvalKey, STOPPED, 'session', {
            mac: signer.macFor(s.auditId, id, p.call, STOPPED.decision),
          }).events;
      await audit.appendMany([
        ...events,
        finishedEvent(s.auditId, id, 'denied', { code: 'APPROVAL_DENIED' }),
      ]);
      pending.notifyClosed(id, deniedFor(p.call, config, 'session_aborted', id));
    }
  };

  const decide: Decisions['decide'] = async (callId, outcome, channel, ctx, held = false, unseen) => {
    const p = pending.take(callId);
    if (p === undefined) throw new SkillsError('APPROVAL_DENIED', 'this approval is no longer pending');
    const audit = await core.deps.audit();
    const { session: s, call } = p;
    await catchUp(audit, s);
    // A stop in this session wins over any later approval of a call asked before it.
    // So does a passkey requirement over an approval without a passkey for this call.
    const o: ApprovalOutcome = s.gate.isAborted()
      ? STOPPED
      : checkPasskey(config.approval, call, callId, outcome, s.caller);
    const d = decisionEvents(s.gate, s.auditId, callId, call.bound.approvalKey, o, channel, {
      caller: s.caller,
      mac: signer.macFor(s.auditId, callId, call, o.decision),
    });
    if (o.decision === 'approved' || o.decision === 'approved_for_session') {
      try {
        await core.commit(audit, s, d.events, d.apply);
      } catch (e) {
        // A retry on another replica (or its console) may have decided it first.
        const elsewhere = core.replicas().lostDecision(audit, p, callId, e, ctx, held);
        if (elsewhere !== undefined) return elsewhere;
        if (isDecidedElsewhere(e)) return notPending();
        if (isStoppedRefusal(e)) return stoppedMeanwhile(audit, s, s.auditId, callId, call);
        throw e;
      }
      return core.run(audit, s, call, callId, ctx);
    }
    // A call the client cancelled while it waited ends cancelled: nobody refused it.
    const [status, code] =
      o.reason === 'request_cancelled'
        ? (['cancelled', 'REQUEST_CANCELLED'] as const)
        : (['denied', 'APPROVAL_DENIED'] as const);
    try {
      await core.commit(audit, s, [...d.events, finishedEvent(s.auditId, callId, status, { code })], d.apply);
    } catch (e) {
      const elsewhere = core.replicas().lostDecision(audit, p, callId, e, ctx, held);
      if (elsewhere !== undefined) return elsewhere;
      throw e;
    }
    if (o.decision === 'abort') await stopSession(audit, s);
    const context = refusalContext(call, config);
    const text = refusalMessage(o.reason, { ...context, ...(unseen === undefined ? {} : { unseen }) });
    return refused(status, text, code, callId);
  };

  const expire = async (callId: string) => {
    const p = pending.get(callId);
    if (p === undefined) return;
    try {
      if (!p.approved) {
        const { channel } = p;
        const timedOut = { decision: 'denied', reason: 'timeout' } as const;
        const result = await decide(callId, timedOut, channel, { canAsk: false, channel });
        core.late.keep(callId, p.session.info.id, result);
        pending.notifyClosed(callId, result);
        return;
      }
      // Approved in the console (recordAnswer) but the client never called again: finished, never run.
      pending.take(callId);
      const audit = await core.deps.audit();
      await audit.append(
        finishedEvent(p.session.auditId, callId, 'cancelled', { code: 'APPROVAL_UNCLAIMED' }),
      );
      const text = `${p.call.skill.name}/${p.call.script} was approved, but the tool was not called again before the approval timed out; it was not run.`;
      pending.notifyClosed(callId, refused('cancelled', text, 'APPROVAL_UNCLAIMED', callId));
    } catch (err) {
      log.error({ err, callId }, 'could not record an approval timeout');
    }
  };

  return { decide, stoppedMeanwhile, stopSession, expire };
}
