import type { CallLog } from '../../audit/call-log.js';
import type { AuditEvent } from '../../audit/types.js';
import { isDecisionReason } from '../../approvals/approval-decision.js';
import { type ApprovalView } from '../../approvals/approval-message.js';
import { type ApprovalAnswer } from '../../approvals/approval-request.js';
import { deniedFor, notPending } from '../call-refusals.js';
import type { CallResult } from '../call-result.js';
import type { Decisions } from '../decide-call.js';
import { isDecidedElsewhere } from '../is-decided-elsewhere.js';
import type { LiveSession } from '../live-sessions.js';
import type { Pending } from '../pending-approvals.js';
import type { CallRequest } from '../prepare-call.js';
import type { RunnerCore } from '../runner-core.js';
import type { CallContext, Recorded, Runner } from '../runner-types.js';
import type { SessionInfo } from '../session.js';
import { createOutboundApprovals } from './outbound-approvals.js';
import { recordSharedAnswer } from './record-shared-answer.js';
import { resumeElsewhere } from './resume-elsewhere.js';

/**
 * What the steps of a call do about other server processes sharing the audit log (replicas, `CallLog.replicas`).
 * With a log this process owns, every one of them is a no-op: nothing is learnt, nothing is shared.
 */
export interface Replicas {
  /**
   * Applies to the session's gate what the same session (principal) recorded on other replicas since the last
   * look: grants, denials, loop guard, "deny and stop" — also those another replica wrote into this process's own
   * audit session (deciding a call asked here). A grant applies only when its MAC verifies.
   */
  catchUp(audit: CallLog, s: LiveSession): Promise<void>;
  /** Events this process wrote, their gate effects applied here already (`catchUp` skips them). */
  wrote(audit: CallLog, s: LiveSession, written: readonly AuditEvent[]): void;
  /** Runs `step` with a signal that also aborts when this process loses its lease (a peer may end the call). */
  whileLeased<T>(audit: CallLog, ctx: CallContext, step: (ctx: CallContext) => Promise<T>): Promise<T>;
  /** A retry for a call another server process asked; undefined when the log holds none for this session. */
  resume(
    callId: string,
    info: SessionInfo,
    answer: ApprovalAnswer,
    ctx: CallContext,
    retry: CallRequest,
  ): Promise<CallResult | undefined>;
  /**
   * This process's decision for `p` (already out of `pending`) failed with `e`: when another console decided it
   * first, the result of that decision; else undefined.
   */
  lostDecision(
    audit: CallLog,
    p: Pending,
    callId: string,
    e: unknown,
    ctx: CallContext,
    held: boolean,
  ): Promise<CallResult> | undefined;
  /** Like `lostDecision`, for an approval recorded while no request waited. */
  lostRecord(audit: CallLog, p: Pending, callId: string, e: unknown): Promise<Recorded | undefined>;
  /** Shares a console approval now waiting here with the consoles of the others. */
  share(audit: CallLog, s: LiveSession, callId: string, approvalKey: string, view: ApprovalView): void;
  /** The call no longer waits for a decision here. */
  settle(callId: string): void;
  recordSharedAnswer: Runner['recordSharedAnswer'];
  onDecidedElsewhere: Runner['onDecidedElsewhere'];
  /** The session ended here: what was learnt of it goes. */
  forget(sessionId: string): void;
  close(): void;
}

export function createReplicas(core: RunnerCore, decisions: Decisions): Replicas {
  const { log, signer, config } = core;
  /** Per session: the last gate event of other replicas applied, and the events this process applied itself. */
  const synced = new Map<string, { after: number; own: Set<number> }>();
  const syncOf = (s: LiveSession) => {
    let st = synced.get(s.info.id);
    if (st === undefined) synced.set(s.info.id, (st = { after: 0, own: new Set() }));
    return st;
  };

  const catchUp = async (audit: CallLog, s: LiveSession) => {
    if (audit.replicas === undefined) return;
    const st = syncOf(s);
    for (const ev of await audit.replicas.gateEventsOf(s.info.id, st.after)) {
      st.after = Math.max(st.after, ev.eventId);
      if (st.own.delete(ev.eventId)) continue;
      // A grant lets later calls run without asking: only one a process holding the shared secret signed.
      if (signer.mayApply(ev)) s.gate.apply(ev);
      else
        log.warn(
          { callId: ev.callId, eventId: ev.eventId },
          'ignored a session grant whose MAC does not verify',
        );
    }
  };

  const outbound = createOutboundApprovals({
    audit: core.deps.audit,
    signer,
    config,
    log,
    now: core.now,
    pollMs: core.deps.decisionPollMs ?? 300,
    pending: () => core.pending,
    syncGate: catchUp,
    stopSession: (audit, s) => decisions.stopSession(audit, s),
    run: (audit, s, call, callId, ctx) => core.run(audit, s, call, callId, ctx),
    // A session closed elsewhere (lease expired) also denies its approvals: not a person's refusal.
    refusal: (p, callId, reason) =>
      isDecisionReason(reason) ? deniedFor(p.call, config, reason, callId) : notPending(),
  });

  /** A log shared by replicas refused this process's decision for a console approval: another console decided it. */
  const lostToConsole = (audit: CallLog, p: Pending, e: unknown) =>
    p.channel === 'console' && audit.replicas !== undefined && isDecidedElsewhere(e);

  return {
    catchUp,
    wrote(audit, s, written) {
      // Applied here now: `catchUp` reads them back (from this session, or the one another replica asked a call in).
      if (audit.replicas !== undefined) for (const ev of written) syncOf(s).own.add(ev.eventId);
    },
    async whileLeased(audit, ctx, step) {
      if (audit.replicas === undefined) return step(ctx);
      // A lost lease stops the run: a peer may have recorded the call interrupted already.
      const lost = new AbortController();
      const unsubscribe = audit.replicas.onLeaseLost(() => lost.abort());
      const signal = ctx.signal === undefined ? lost.signal : AbortSignal.any([ctx.signal, lost.signal]);
      try {
        return await step({ ...ctx, signal });
      } finally {
        unsubscribe();
      }
    },
    resume: (callId, info, answer, ctx, retry) =>
      resumeElsewhere(core, decisions, catchUp, { callId, info, answer, ctx, retry }),
    lostDecision: (audit, p, callId, e, ctx, held) =>
      lostToConsole(audit, p, e) ? outbound.lostClaim(p, callId, ctx, held) : undefined,
    lostRecord: async (audit, p, callId, e) =>
      lostToConsole(audit, p, e) ? outbound.lostRecord(p, callId) : undefined,
    share: (audit, s, callId, key, view) => outbound.share(audit, s, callId, key, view),
    settle: (callId) => outbound.settle(callId),
    recordSharedAnswer: async (callId, seen, answer) =>
      recordSharedAnswer(await core.deps.audit(), config, signer, callId, seen, answer),
    onDecidedElsewhere: (listener) => outbound.onDecidedElsewhere(listener),
    forget: (sessionId) => void synced.delete(sessionId),
    close: () => outbound.close(),
  };
}
