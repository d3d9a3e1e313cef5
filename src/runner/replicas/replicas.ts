import type { CallLog } from '../../audit/call-log.js';
import type { AuditEvent } from '../../audit/types.js';
import type { ApprovalAnswer } from '../../approvals/approval-request.js';
import type { ApprovalView } from '../../approvals/approval-view.js';
import type { CallRequest } from '../call-request.js';
import type { CallResult } from '../call-result.js';
import type { LiveSession } from '../live-sessions.js';
import type { Pending } from '../pending-approvals.js';
import type { CallContext, Recorded, Runner } from '../runner-types.js';
import type { SessionInfo } from '../session.js';

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
