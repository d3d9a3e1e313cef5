import type { PendingEvent } from './check-event-input.js';
import { eventHash } from './event-hash.js';
import type { AuditEvent } from './types.js';

/**
 * The event `e` becomes at `eventId`, committed at `ts`, after the event hashing to `prevHash`. `payloadJson`, when
 * given, is `canonicalJson(payload)` (what the row stores), so it is not encoded twice.
 */
export function chainEvent(
  e: PendingEvent,
  payload: Record<string, unknown>,
  at: { eventId: number; ts: number; prevHash: string },
  payloadJson?: string,
): AuditEvent {
  const { eventId, ts, prevHash } = at;
  const hash = eventHash(
    prevHash,
    {
      event_id: eventId,
      ts,
      session_id: e.sessionId,
      call_id: e.callId,
      type: e.type,
      payload,
    },
    payloadJson,
  );
  return {
    eventId,
    ts,
    sessionId: e.sessionId,
    callId: e.callId,
    type: e.type,
    payload,
    prevHash,
    hash,
  } as AuditEvent;
}
