import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { pendingViewKey } from '../../src/audit/postgres/pending-view-key.js';
import { openPendingView, sealPendingView } from '../../src/audit/postgres/seal-pending-view.js';
import { requestStateKey } from '../../src/mcp/request-state-key.js';

const secret = randomBytes(32);
const key = pendingViewKey(secret);
const body = { input: { text: 'a value only the person sees' }, n: 1 };

describe('sealed views of waiting approvals', () => {
  it('opens what was sealed for the same part of the same call id under the same shared secret', () => {
    for (const part of ['card', 'input'] as const) {
      const sealed = sealPendingView(key, part, 'call-1', body);
      expect(openPendingView(pendingViewKey(Buffer.from(secret)), part, 'call-1', sealed)).toEqual(body);
      expect(sealed.toString('latin1')).not.toContain('a value only the person sees');
    }
  });

  it('seals the same view differently each time (a fresh nonce)', () => {
    expect(
      sealPendingView(key, 'card', 'call-1', body).equals(sealPendingView(key, 'card', 'call-1', body)),
    ).toBe(false);
  });

  it('opens nothing under another call id, as the other part, under another key, or after any change', () => {
    const sealed = sealPendingView(key, 'card', 'call-1', body);
    expect(openPendingView(key, 'card', 'call-2', sealed)).toBeUndefined();
    expect(openPendingView(key, 'input', 'call-1', sealed)).toBeUndefined();
    expect(
      openPendingView(key, 'card', 'call-1', sealPendingView(key, 'input', 'call-1', body)),
    ).toBeUndefined();
    expect(openPendingView(pendingViewKey(randomBytes(32)), 'card', 'call-1', sealed)).toBeUndefined();
    for (const at of [0, 5, 20, sealed.length - 1]) {
      const bent = Buffer.from(sealed);
      bent[at] = bent[at]! ^ 1;
      expect(openPendingView(key, 'card', 'call-1', bent)).toBeUndefined();
    }
    expect(openPendingView(key, 'card', 'call-1', sealed.subarray(0, 20))).toBeUndefined();
  });

  it('derives a key of its own from the shared secret, not the requestState key', () => {
    expect(key).toHaveLength(32);
    expect(key.equals(requestStateKey(secret))).toBe(false);
    expect(key.equals(secret)).toBe(false);
  });
});
