import type { Replicas } from './replicas.js';
import type { CallLog } from '../../audit/call-log.js';
import { isDecisionReason } from '../../approvals/approval-decision.js';
import { deniedFor, notPending } from '../call-refusals.js';
import type { Decisions } from '../decide-call.js';
import { isDecidedElsewhere } from '../is-decided-elsewhere.js';
import type { LiveSession } from '../live-sessions.js';
import type { Pending } from '../pending-approvals.js';
import type { RunnerCore } from '../runner-core.js';
import { createOutboundApprovals } from './outbound-approvals.js';
import { recordSharedAnswer } from './record-shared-answer.js';
import { resumeElsewhere } from './resume-elsewhere.js';

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
