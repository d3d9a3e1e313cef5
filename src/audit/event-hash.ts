import { createHash } from 'node:crypto';
import { canonicalJson } from '../canonical-json.js';

/** `prev_hash` of the first event. */
export const GENESIS_HASH = '0'.repeat(64);

/** The fields an event's hash covers (everything but the chain columns). */
export interface HashedFields {
  event_id: number;
  ts: number;
  session_id: string;
  call_id: string | null;
  type: string;
  payload: unknown;
}

/**
 * `sha256(prev_hash + "\n" + canonicalJson({event_id, ts, session_id, call_id, type, payload}))`, lowercase hex.
 * `payloadJson`, when the caller has it, is `canonicalJson(payload)`: the payload is then not encoded again.
 */
export function eventHash(prevHash: string, fields: HashedFields, payloadJson?: string): string {
  const { event_id, ts, session_id, call_id, type, payload } = fields;
  const body =
    payloadJson === undefined
      ? canonicalJson({ event_id, ts, session_id, call_id, type, payload })
      : // The same text: the keys in canonical order, the payload's own canonical form in its place.
        `{"call_id":${canonicalJson(call_id)},"event_id":${canonicalJson(event_id)},"payload":${payloadJson},` +
        `"session_id":${canonicalJson(session_id)},"ts":${canonicalJson(ts)},"type":${canonicalJson(type)}}`;
  return createHash('sha256').update(`${prevHash}\n${body}`, 'utf8').digest('hex');
}
