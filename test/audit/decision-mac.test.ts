import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { decisionMac, isDecisionMacValid, type DecisionBinding } from '../../src/audit/decision-mac.js';
import { decisionMacKey } from '../../src/audit/decision-mac-key.js';
import { pendingViewKey } from '../../src/audit/postgres/pending-view-key.js';
import { requestStateKey } from '../../src/mcp/request-state-key.js';

const secret = randomBytes(32);
const key = decisionMacKey(secret);
const hex = (c: string) => c.repeat(64);
const b: DecisionBinding = {
  callId: 'call-1',
  sessionId: 'session-1',
  approvalKey: hex('a'),
  inputSha256: hex('b'),
  bundleSha256: hex('c'),
  decision: 'approved',
};

describe('the MAC of an approval decision', () => {
  it('verifies under a key derived from the same shared secret', () => {
    const mac = decisionMac(key, b);
    expect(mac).toMatch(/^[0-9a-f]{64}$/);
    expect(isDecisionMacValid(decisionMacKey(Buffer.from(secret)), b, mac)).toBe(true);
  });

  it('does not verify for any other call, session, approval key, input, bundle or decision', () => {
    const mac = decisionMac(key, b);
    const others: DecisionBinding[] = [
      { ...b, callId: 'call-2' },
      { ...b, sessionId: 'session-1.x' },
      { ...b, approvalKey: hex('d') },
      { ...b, inputSha256: hex('d') },
      { ...b, bundleSha256: hex('d') },
      { ...b, bundleSha256: null },
      { ...b, decision: 'approved_for_session' },
      { ...b, decision: 'denied' },
    ];
    for (const o of others) expect(isDecisionMacValid(key, o, mac)).toBe(false);
  });

  it('does not verify under another secret, nor a missing, malformed or changed MAC', () => {
    const mac = decisionMac(key, b);
    expect(isDecisionMacValid(decisionMacKey(randomBytes(32)), b, mac)).toBe(false);
    const changed = `${mac.slice(0, 63)}${mac.endsWith('0') ? '1' : '0'}`;
    for (const bad of [undefined, null, '', 'zz', mac.toUpperCase(), mac.slice(1), changed])
      expect(isDecisionMacValid(key, b, bad)).toBe(false);
  });

  it('derives its key from the shared secret apart from the requestState and pending-view keys', () => {
    expect(key).toHaveLength(32);
    expect(key.equals(requestStateKey(secret))).toBe(false);
    expect(key.equals(pendingViewKey(secret))).toBe(false);
    expect(key.equals(secret)).toBe(false);
  });
});
