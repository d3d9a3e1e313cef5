import type { SqliteDb } from './sqlite/sqlite-db.js';
import type { PendingEvent } from './check-event-input.js';
import type { ApprovalChannel } from './approval-payload-schemas.js';
import type { AuditEvent, RecoveryReport, SessionEndReason } from './types.js';

type Write = (event: PendingEvent) => AuditEvent;

/** What a session left open: approvals asked and not decided, calls neither finished nor interrupted (oldest first). */
export interface LeftOpen {
  pending: { callId: string; approvalKey: string; channel: ApprovalChannel }[];
  open: { callId: string; stage: 'requested' | 'started' }[];
}

/**
 * The events that close what a session left open, then end it: pending approvals → `approval_decided` denied, open
 * calls → `tool_call_interrupted` (stage tells whether a process may have run), then `session_ended`. `why` is
 * `server_restart` for crash recovery, `session_ended` for a normal close.
 */
export function closingEvents(
  sessionId: string,
  left: LeftOpen,
  endReason: SessionEndReason,
  why: 'server_restart' | 'session_ended',
  interrupted: 'server_restart' | 'session_ended' | 'lease_expired' = why,
): PendingEvent[] {
  return [
    ...left.pending.map((a): PendingEvent => ({
      type: 'approval_decided',
      sessionId,
      callId: a.callId,
      payload: { approval_key: a.approvalKey, decision: 'denied', reason: why, channel: a.channel },
    })),
    ...left.open.map((c): PendingEvent => ({
      type: 'tool_call_interrupted',
      sessionId,
      callId: c.callId,
      payload: { reason: interrupted, stage: c.stage },
    })),
    {
      type: 'session_ended',
      sessionId,
      callId: null,
      payload: { reason: endReason, interrupted_calls: left.open.length },
    },
  ];
}

/** {@link closingEvents} of a SQLite log, written inside the caller's transaction; returns `session_ended`. */
export function closeSession(
  db: SqliteDb,
  write: Write,
  sessionId: string,
  endReason: SessionEndReason,
  why: 'server_restart' | 'session_ended',
  report?: Pick<RecoveryReport, 'interruptedCalls' | 'deniedApprovals'>,
): AuditEvent {
  const pending = (
    db
      .prepare(
        `SELECT call_id, approval_key, channel FROM approvals
         WHERE session_id = ? AND decided_event_id IS NULL ORDER BY requested_event_id`,
      )
      .all(sessionId) as { call_id: string; approval_key: string; channel: ApprovalChannel }[]
  ).map((a) => ({ callId: a.call_id, approvalKey: a.approval_key, channel: a.channel }));
  const open = (
    db
      .prepare(
        `SELECT call_id, state FROM calls
         WHERE session_id = ? AND state IN ('requested', 'started') ORDER BY requested_event_id`,
      )
      .all(sessionId) as { call_id: string; state: 'requested' | 'started' }[]
  ).map((c) => ({ callId: c.call_id, stage: c.state }));
  for (const a of pending)
    report?.deniedApprovals.push({ callId: a.callId, sessionId, approvalKey: a.approvalKey });
  for (const c of open) report?.interruptedCalls.push({ callId: c.callId, sessionId, stage: c.stage });
  const events = closingEvents(sessionId, { pending, open }, endReason, why).map(write);
  return events.at(-1)!;
}
