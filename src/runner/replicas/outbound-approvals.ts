import type { CallLog } from '../../audit/call-log.js';
import type { ApprovalDecidedPayload } from '../../audit/payload-schemas.js';
import type { AuditEvent } from '../../audit/types.js';
import type { Config } from '../../config/config-schema.js';
import type { ApprovalView } from '../../approvals/approval-view.js';
import type { Logger } from '../../log.js';
import { finishedEvent } from '../call-events.js';
import { bindingOf, type DecisionSigner } from '../decision-signer.js';
import { isDecidedElsewhere } from '../is-decided-elsewhere.js';
import { refused, type CallResult } from '../call-result.js';
import { createDecisionWatcher } from './decision-watcher.js';
import type { LiveSession } from '../live-sessions.js';
import type { Pending, PendingApprovals } from '../pending-approvals.js';
import type { PreparedCall } from '../prepare-call.js';
import type { CallContext, DecidedElsewhere, Recorded } from '../runner-types.js';
import { sharedParts } from '../../approvals/replica-card.js';
import { principalDigest } from '../../audit/principal-digest.js';
import { checkPasskey } from '../passkey-check.js';

/**
 * With a log shared by replicas (and their shared secret): the console approvals waiting in this process, shown to
 * the consoles of the others, and the decisions those record for them.
 */
export interface OutboundApprovals {
  /** Shares a console approval now waiting here (sealed) and looks for a decision recorded elsewhere meanwhile. */
  share(audit: CallLog, s: LiveSession, callId: string, approvalKey: string, view: ApprovalView): void;
  /** The call no longer waits for a decision here: its view goes, and its decision is no longer looked for. */
  settle(callId: string): void;
  /**
   * This process's own decision for a console approval lost the claim to one recorded elsewhere first; `p` is already
   * out of `pending`. That decision holds: a refusal (recorded with the call's end) is handed out; an approval runs
   * the call for the request held here (`held`), or with none ends it unrun.
   */
  lostClaim(p: Pending, callId: string, ctx: CallContext, held: boolean): Promise<CallResult>;
  /** Like `lostClaim`, for an approval recorded while no request waited: an approval that won is kept for the retry. */
  lostRecord(p: Pending, callId: string): Promise<Recorded | undefined>;
  onDecidedElsewhere(listener: DecidedElsewhere): () => void;
  close(): void;
}

export interface OutboundApprovalDeps {
  audit: () => Promise<CallLog>;
  /** Checks the MAC of a decision recorded elsewhere; without its key nothing is shared. */
  signer: DecisionSigner;
  config: Config;
  log: Logger;
  now: () => number;
  pollMs: number;
  pending: () => PendingApprovals;
  /** Applies to the session's gate what the log holds of its family since the last look (grants, stops, …). */
  syncGate: (audit: CallLog, s: LiveSession) => Promise<void>;
  /** "Deny and stop": closes the session's other approvals waiting here. */
  stopSession: (audit: CallLog, s: LiveSession) => Promise<void>;
  run: (
    audit: CallLog,
    s: LiveSession,
    call: PreparedCall,
    callId: string,
    ctx: CallContext,
  ) => Promise<CallResult>;
  /** The refusal a call gets for a recorded reason. */
  refusal: (p: Pending, callId: string, reason: string) => CallResult;
}

const approving = (decision: string) => decision === 'approved' || decision === 'approved_for_session';

export function createOutboundApprovals(deps: OutboundApprovalDeps): OutboundApprovals {
  const { log, config, signer } = deps;
  const shared = new Set<string>();
  /** Calls for which a decision whose MAC does not verify was found (logged once each). */
  const distrusted = new Set<string>();
  const listeners = new Set<DecidedElsewhere>();
  const watcher = createDecisionWatcher({
    audit: deps.audit,
    everyMs: deps.pollMs,
    log,
    onDecision: (ev) => takeDecision(ev),
  });
  const warnSync = (err: unknown) => log.warn({ err }, 'could not read other replicas’ stops');

  const settle = (callId: string) => {
    distrusted.delete(callId);
    if (!shared.delete(callId)) return;
    watcher.unwatch(callId);
    void deps
      .audit()
      .then((a) => a.replicas?.pendingViews?.drop(callId))
      .catch((err: unknown) => log.warn({ err, callId }, 'could not remove a shared approval'));
  };

  /**
   * A decision recorded elsewhere for a console approval waiting here, taken over. An approval is kept, as one made
   * in this console while no request waited: the waiting request (or the retry) runs the call without recording
   * the decision again. A refusal was recorded with the call's end: the call is closed here with it; "deny and
   * stop" also closes the session's other approvals here. `taken`: `p` is out of `pending` already.
   */
  const adopt = async (
    p: Pending,
    callId: string,
    d: ApprovalDecidedPayload,
    taken: boolean,
  ): Promise<CallResult | undefined> => {
    const s = p.session;
    if (approving(d.decision)) {
      p.approved = true;
      settle(callId);
      const audit = await deps.audit();
      await deps.syncGate(audit, s).catch(warnSync);
      for (const l of listeners) l(callId, { decision: d.decision });
      return undefined;
    }
    if (!taken && deps.pending().take(callId) === undefined) return undefined;
    const audit = await deps.audit();
    await deps.syncGate(audit, s).catch(warnSync);
    if (d.decision === 'abort') await deps.stopSession(audit, s);
    const result = deps.refusal(p, callId, d.reason);
    for (const l of listeners) l(callId, { decision: d.decision, result });
    return result;
  };

  /**
   * Whether a decision recorded elsewhere may be acted on here. A refusal can only refuse, so it is taken as
   * recorded (the denials a peer writes when it closes a dead replica's sessions are not signed). An approval must
   * have been made by a process holding the shared secret, for this call as it waits here (session, approval key,
   * input and bundle digests) and with this decision; any other, whoever could write it into the database, is
   * logged once and ignored: the call keeps waiting, then times out.
   */
  const verified = (p: Pending, callId: string, d: ApprovalDecidedPayload): boolean => {
    if (!approving(d.decision)) return true;
    const outcome = {
      decision: d.decision,
      reason: 'user' as const,
      ...(d.passkey === undefined ? {} : { passkey: d.passkey }),
    };
    // Judged by the decision it leaves: where four eyes stand, the check hands back the approval marked as such.
    const passkeyOk =
      checkPasskey(config.approval, p.call, callId, outcome, p.session.caller).decision === d.decision;
    if (passkeyOk && signer.verifies(bindingOf(p.session.auditId, callId, p.call, d.decision), d.mac))
      return true;
    if (!distrusted.has(callId)) {
      distrusted.add(callId);
      log.warn(
        { callId, decision: d.decision, channel: d.channel },
        'ignored a decision recorded elsewhere whose MAC does not verify',
      );
    }
    return false;
  };

  /** From the watcher: news only for a console approval still waiting here that this process is not deciding. */
  const takeDecision = async (ev: AuditEvent<'approval_decided'>) => {
    const callId = ev.callId ?? '';
    const p = deps.pending().get(callId);
    if (p === undefined || p.approved === true) return watcher.unwatch(callId);
    if (p.recording === true || p.channel !== 'console') return;
    if (!verified(p, callId, ev.payload)) return;
    await adopt(p, callId, ev.payload, false);
  };

  /** The decision that won the claim on a call (the first recorded), or undefined when there is none. */
  const winner = async (callId: string) =>
    (await (await deps.audit()).replicas?.decisionsOf([callId]))?.[0]?.payload;

  /**
   * The claim went to a decision that does not verify: nothing can be recorded for the call any more, so it ends
   * here unrun (its end recorded if the log still takes it).
   */
  const unverifiable = async (p: Pending, callId: string): Promise<CallResult> => {
    const audit = await deps.audit();
    try {
      await audit.append(finishedEvent(p.session.auditId, callId, 'denied', { code: 'APPROVAL_DENIED' }));
    } catch (err) {
      if (!isDecidedElsewhere(err)) throw err;
    }
    const text =
      `${p.call.skill.name}/${p.call.script} was not run: the audit log holds a decision for it that this ` +
      'server cannot verify (not signed with the secret the server processes share). Call the tool again to ask anew.';
    return refused('denied', text, 'APPROVAL_DENIED', callId);
  };

  return {
    share(audit, s, callId, approvalKey, view) {
      const board = audit.replicas?.pendingViews;
      // Shared only when the decisions other consoles record for it can be checked here.
      if (board === undefined || !signer.enabled) return;
      shared.add(callId);
      watcher.watch(callId);
      const caller = s.info.caller;
      const { card, input } = sharedParts(
        {
          callId,
          sessionId: s.auditId,
          approvalKey,
          askedAt: deps.now(),
          ...(caller === undefined ? {} : { caller: { issuer: caller.issuer, subject: caller.subject } }),
        },
        view,
      );
      // Whose approval it is, for the listing's fair share: the principal, else the session family.
      const principal =
        s.info.principal === undefined ? s.info.id.split('.')[0]! : principalDigest(s.info.principal);
      const ttlMs = config.approval.timeout_ms;
      board.share({ callId, sessionId: s.auditId, principal, ttlMs, card, input }).then(
        // Decided or closed while it was being shared: the view goes again.
        () => void (shared.has(callId) ? undefined : board.drop(callId).catch(() => undefined)),
        (err: unknown) =>
          log.warn({ err, callId }, 'could not share a waiting approval with the other replicas'),
      );
    },
    settle,
    async lostClaim(p, callId, ctx, held) {
      const d = await winner(callId);
      if (d === undefined) return deps.refusal(p, callId, 'session_ended');
      if (!verified(p, callId, d)) return unverifiable(p, callId);
      if (!approving(d.decision)) return (await adopt(p, callId, d, true))!;
      const audit = await deps.audit();
      await deps.syncGate(audit, p.session).catch(warnSync);
      if (held) return deps.run(audit, p.session, p.call, callId, ctx);
      await audit.append(
        finishedEvent(p.session.auditId, callId, 'cancelled', { code: 'APPROVAL_UNCLAIMED' }),
      );
      const text =
        `${p.call.skill.name}/${p.call.script} was approved in another server process's console after it was ` +
        'closed here; it was not run.';
      return refused('cancelled', text, 'APPROVAL_UNCLAIMED', callId);
    },
    async lostRecord(p, callId) {
      const d = await winner(callId);
      if (d === undefined || !verified(p, callId, d)) return undefined;
      const r = await adopt(p, callId, d, false);
      if (approving(d.decision)) return { kind: 'approved' };
      return r === undefined ? undefined : { kind: 'closed', result: r };
    },
    onDecidedElsewhere(listener) {
      listeners.add(listener);
      return () => void listeners.delete(listener);
    },
    close: () => watcher.close(),
  };
}
