import type { OrderLookup } from './check-event-order.js';
import type { ApprovalChannel } from './approval-payload-schemas.js';

/** An event as the book reads it: its payload already parsed. */
export interface BookEvent {
  type: string;
  sessionId: string;
  callId: string | null;
  payload: Record<string, unknown>;
}

interface BookCall {
  sessionId: string;
  state: 'requested' | 'started' | 'finished' | 'interrupted';
  policyDecided: boolean;
}
interface BookApproval {
  sessionId: string;
  approvalKey: string;
  channel: ApprovalChannel;
  decided: boolean;
}

/**
 * Where some sessions and calls stand, folded from their events in commit order: what the order check and a session's
 * close need. The PostgreSQL store builds one per append transaction from the events of the sessions and calls it
 * writes about (the SQLite store keeps the same facts in its summary tables).
 */
export interface CallBook extends OrderLookup {
  apply(e: BookEvent): void;
  /** Approvals of the session asked and not decided, oldest first. */
  pendingApprovals(sessionId: string): { callId: string; approvalKey: string; channel: ApprovalChannel }[];
  /** Calls of the session neither finished nor interrupted, oldest first. */
  openCalls(sessionId: string): { callId: string; stage: 'requested' | 'started' }[];
}

export function createCallBook(): CallBook {
  const sessions = new Map<string, { ended: boolean }>();
  const calls = new Map<string, BookCall>();
  const approvals = new Map<string, BookApproval>();
  const apply = (e: BookEvent) => {
    const c = e.callId === null ? undefined : calls.get(e.callId);
    switch (e.type) {
      case 'session_started':
        sessions.set(e.sessionId, { ended: false });
        return;
      case 'session_ended': {
        const s = sessions.get(e.sessionId);
        if (s !== undefined) s.ended = true;
        return;
      }
      case 'tool_call_requested':
        if (e.callId !== null)
          calls.set(e.callId, { sessionId: e.sessionId, state: 'requested', policyDecided: false });
        return;
      case 'policy_decided':
        if (c !== undefined) c.policyDecided = true;
        return;
      case 'approval_requested':
      case 'approval_decided': {
        if (e.callId === null) return;
        const a = approvals.get(e.callId);
        if (a !== undefined) a.decided ||= e.type === 'approval_decided';
        else
          approvals.set(e.callId, {
            sessionId: e.sessionId,
            approvalKey: String(e.payload.approval_key),
            channel: e.payload.channel as ApprovalChannel,
            decided: e.type === 'approval_decided',
          });
        return;
      }
      case 'tool_call_started':
        if (c !== undefined) c.state = 'started';
        return;
      case 'tool_call_finished':
        if (c !== undefined) c.state = 'finished';
        return;
      case 'tool_call_interrupted':
        if (c !== undefined) c.state = 'interrupted';
        return;
    }
  };
  return {
    apply,
    session: (id) => sessions.get(id),
    call: (id) => calls.get(id),
    approval: (id) => approvals.get(id),
    pendingApprovals: (sessionId) =>
      [...approvals]
        .filter(([, a]) => a.sessionId === sessionId && !a.decided)
        .map(([callId, a]) => ({ callId, approvalKey: a.approvalKey, channel: a.channel })),
    openCalls: (sessionId) =>
      [...calls]
        .filter(([, c]) => c.sessionId === sessionId && (c.state === 'requested' || c.state === 'started'))
        .map(([callId, c]) => ({ callId, stage: c.state as 'requested' | 'started' })),
  };
}
