import { refused, type PendingEvent } from './check-event-input.js';
import { isCallEventType } from './event-types.js';

/** What the order check needs to know about the sessions and calls an event names, as committed so far. */
export interface OrderLookup {
  session(sessionId: string): { ended: boolean } | undefined;
  call(callId: string): { sessionId: string; state: string; policyDecided: boolean } | undefined;
  approval(callId: string): { approvalKey: string; decided: boolean } | undefined;
}

/**
 * The per-session and per-call order every store enforces inside its append transaction: a session starts once and
 * takes nothing after its end; a call id is used once; a call's policy and approval are decided once; it starts once;
 * nothing follows its terminal event; a terminal event waits for a pending approval's decision. Throws AUDIT_FAILED.
 */
export function checkEventOrder(e: PendingEvent, payload: Record<string, unknown>, at: OrderLookup): void {
  const s = at.session(e.sessionId);
  if (e.type === 'session_started') {
    if (s) throw refused(e, 'the session already exists');
    return;
  }
  if (!s) throw refused(e, 'unknown session');
  if (s.ended) throw refused(e, 'the session has ended');
  if (e.callId === null) {
    if (isCallEventType(e.type)) throw refused(e, 'a call event needs a callId');
    return;
  }
  const c = at.call(e.callId);
  if (e.type === 'tool_call_requested') {
    if (c) throw refused(e, 'the call id is already used');
    return;
  }
  if (!c) throw refused(e, 'unknown call');
  if (c.sessionId !== e.sessionId) throw refused(e, 'the call belongs to another session');
  if (!isCallEventType(e.type)) return;
  if (c.state === 'finished' || c.state === 'interrupted')
    throw refused(e, 'the call already has its terminal event');
  const a = at.approval(e.callId);
  switch (e.type) {
    case 'policy_decided':
      if (c.policyDecided) throw refused(e, 'the policy was already decided for this call');
      return;
    case 'approval_requested':
      if (a) throw refused(e, 'approval was already asked for this call');
      return;
    case 'approval_decided':
      if (a?.decided === true) throw refused(e, 'approval was already decided for this call');
      if (a && a.approvalKey !== payload.approval_key)
        throw refused(e, 'approval_key differs from the request');
      return;
    case 'tool_call_started':
      if (c.state !== 'requested') throw refused(e, 'the call was already started');
      return;
    case 'tool_call_finished':
    case 'tool_call_interrupted': {
      if (a && !a.decided) throw refused(e, 'its approval is still pending: decide it first');
      const paths = (payload.artifacts as { path: string }[] | undefined)?.map((x) => x.path) ?? [];
      if (new Set(paths).size !== paths.length) throw refused(e, 'artifact paths repeat');
      return;
    }
  }
}
