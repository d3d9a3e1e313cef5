import { createHmac, timingSafeEqual } from 'node:crypto';
import { canonicalJson } from '../canonical-json.js';

/** What a decision's MAC binds: the call, what the person was asked about (as recorded), and the decision. */
export interface DecisionBinding {
  callId: string;
  /** The audit session the call's events belong to (the one that asked). */
  sessionId: string;
  approvalKey: string;
  inputSha256: string;
  bundleSha256: string | null;
  decision: string;
}

const DOMAIN = 'skills-mcp approval decision v1\0';

const message = (b: DecisionBinding) =>
  DOMAIN +
  canonicalJson({
    approval_key: b.approvalKey,
    bundle_sha256: b.bundleSha256,
    call_id: b.callId,
    decision: b.decision,
    input_sha256: b.inputSha256,
    session_id: b.sessionId,
  });

/**
 * HMAC-SHA256 (lowercase hex) under `key` (`decisionMacKey`) of the canonical JSON of the binding: recorded as
 * `approval_decided.mac`. It holds nothing the log does not already hold, and no one without the key can make one.
 */
export function decisionMac(key: Uint8Array, b: DecisionBinding): string {
  return createHmac('sha256', key).update(message(b), 'utf8').digest('hex');
}

/** Whether `mac` is the MAC of exactly this binding under `key` (compared in constant time). */
export function isDecisionMacValid(key: Uint8Array, b: DecisionBinding, mac: unknown): boolean {
  if (typeof mac !== 'string' || !/^[0-9a-f]{64}$/.test(mac)) return false;
  return timingSafeEqual(Buffer.from(decisionMac(key, b), 'hex'), Buffer.from(mac, 'hex'));
}
