import type { GateEvent } from '../audit/replica-log.js';
import { decisionMac, isDecisionMacValid, type DecisionBinding } from '../audit/decision-mac.js';
import type { PreparedCall } from './prepare-call.js';

/**
 * Signs the decisions this process records, and checks those recorded by others (`approval_decided.mac`). Without
 * the replicas' shared secret nothing is signed and nothing recorded elsewhere verifies.
 */
export interface DecisionSigner {
  /** Whether this process holds the key (decisions are signed, and those of others can be checked). */
  readonly enabled: boolean;
  /** The MAC of a decision for `call` (as this process prepared it), or undefined without a key. */
  macFor(sessionId: string, callId: string, call: PreparedCall, decision: string): string | undefined;
  /** The MAC of a decision for a call as the log recorded it, or undefined without a key. */
  mac(b: DecisionBinding): string | undefined;
  /** Whether `mac` is the MAC of exactly `b`: false without a key. */
  verifies(b: DecisionBinding, mac: unknown): boolean;
  /**
   * Whether a gate event read from the shared log may be applied: anything but a grant (`approved_for_session`)
   * may (refusals, denials, stops only refuse); a grant only when its MAC verifies against its call as requested.
   */
  mayApply(ev: GateEvent): boolean;
}

const isGrant = (ev: GateEvent) =>
  ev.type === 'approval_decided' &&
  (ev.payload as { decision?: unknown }).decision === 'approved_for_session';

/** What a decision for `call`, prepared in this process, binds. */
export const bindingOf = (
  sessionId: string,
  callId: string,
  call: PreparedCall,
  decision: string,
): DecisionBinding => ({
  callId,
  sessionId,
  approvalKey: call.bound.approvalKey,
  inputSha256: call.bound.input.input_sha256,
  bundleSha256: call.bundle.sha256,
  decision,
});

export function createDecisionSigner(key: Uint8Array | undefined): DecisionSigner {
  const mac = (b: DecisionBinding) => (key === undefined ? undefined : decisionMac(key, b));
  return {
    enabled: key !== undefined,
    mac,
    macFor: (sessionId, callId, call, decision) => mac(bindingOf(sessionId, callId, call, decision)),
    verifies: (b, m) => key !== undefined && isDecisionMacValid(key, b, m),
    mayApply(ev) {
      if (!isGrant(ev)) return true;
      const p = ev.payload as { approval_key?: unknown; decision?: unknown; mac?: unknown };
      const r = ev.requested;
      if (key === undefined || r === undefined || ev.callId === null || p.approval_key !== r.approvalKey)
        return false;
      const b = { ...r, callId: ev.callId, sessionId: ev.sessionId, decision: String(p.decision) };
      return isDecisionMacValid(key, b, p.mac);
    },
  };
}
