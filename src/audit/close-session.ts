import type { Database } from 'better-sqlite3';
import type { PendingEvent } from './check-event-input.js';
import type { ApprovalChannel } from './payload-schemas.js';
import type { AuditEvent, RecoveryReport, SessionEndReason } from './types.js';

type Write = (event: PendingEvent) => AuditEvent;

/**
 * Closes whatever a session left open, then ends it: pending approvals → `approval_decided` denied, open calls →
 * `tool_call_interrupted` (stage tells whether a process may have run), then `session_ended`. Runs inside the
 * caller's transaction. `why` is `server_restart` for crash recovery, `session_ended` for a normal close.
 */
export function closeSession(
  db: Database,
  write: Write,
  sessionId: string,
  endReason: SessionEndReason,
  why: 'server_restart' | 'session_ended',
  report?: Pick<RecoveryReport, 'interruptedCalls' | 'deniedApprovals'>,
): AuditEvent {
  const pending = db
    .prepare(
      `SELECT call_id, approval_key, channel FROM approvals
       WHERE session_id = ? AND decided_event_id IS NULL ORDER BY requested_event_id`,
    )
    .all(sessionId) as { call_id: string; approval_key: string; channel: ApprovalChannel }[];
  for (const a of pending) {
    write({
      type: 'approval_decided',
      sessionId,
      callId: a.call_id,
      payload: { approval_key: a.approval_key, decision: 'denied', reason: why, channel: a.channel },
    });
    report?.deniedApprovals.push({ callId: a.call_id, sessionId, approvalKey: a.approval_key });
  }
  const open = db
    .prepare(
      `SELECT call_id, state FROM calls
       WHERE session_id = ? AND state IN ('requested', 'started') ORDER BY requested_event_id`,
    )
    .all(sessionId) as { call_id: string; state: 'requested' | 'started' }[];
  for (const c of open) {
    write({
      type: 'tool_call_interrupted',
      sessionId,
      callId: c.call_id,
      payload: { reason: why, stage: c.state },
    });
    report?.interruptedCalls.push({ callId: c.call_id, sessionId, stage: c.state });
  }
  return write({
    type: 'session_ended',
    sessionId,
    callId: null,
    payload: { reason: endReason, interrupted_calls: open.length },
  });
}
