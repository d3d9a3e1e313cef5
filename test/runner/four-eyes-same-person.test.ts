import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { ApprovalOutcome } from '../../src/approvals/approval-decision.js';
import type { PasskeyEvidence } from '../../src/approvals/passkey-evidence.js';
import { checkFourEyes } from '../../src/runner/passkey-check.js';

const ISSUER = 'https://issuer.example';
const sha256 = (s: string) => createHash('sha256').update(s, 'utf8').digest('hex');

/** A console approval whose passkey was enrolled with `subject`. */
const approvedWith = (subject: string): ApprovalOutcome => ({
  decision: 'approved',
  reason: 'user',
  passkey: { person: { name: 'Bob', subject } } as PasskeyEvidence,
});

describe('four eyes: the passkey of the caller in another spelling is still the caller', () => {
  it.each([
    ['case', 'alice@example.com', 'Alice@Example.com'],
    ['surrounding whitespace', 'alice', ' alice\t'],
    ['Unicode form', 'ａｌｉｃｅ', 'alice'],
    ['composed and decomposed accents', 'jos\u00e9', 'jose\u0301'],
    ['the subject digest given as the subject', 'alice', sha256('alice')],
  ])('refuses as self_approval a passkey enrolled for the caller up to %s', (_what, caller, enrolled) => {
    const o = checkFourEyes(approvedWith(enrolled), { issuer: ISSUER, subject: caller });
    expect(o).toMatchObject({ decision: 'denied', reason: 'self_approval' });
  });

  it('refuses, with hashed subjects, a passkey enrolled for the caller in another case or as the digest', () => {
    const caller = { issuer: ISSUER, subject_sha256: sha256('alice@example.com') };
    for (const enrolled of ['Alice@Example.com', ` ${sha256('alice@example.com').toUpperCase()}`])
      expect(checkFourEyes(approvedWith(enrolled), caller)).toMatchObject({ reason: 'self_approval' });
  });

  it("lets another person's passkey approve", () => {
    const o = approvedWith('bob@example.com');
    expect(checkFourEyes(o, { issuer: ISSUER, subject: 'alice@example.com' })).toBe(o);
    expect(checkFourEyes(o, { issuer: ISSUER, subject_sha256: sha256('alice@example.com') })).toBe(o);
  });

  it('refuses a passkey enrolled with a blank subject as four_eyes_required', () => {
    const o = checkFourEyes(approvedWith(' \t'), { issuer: ISSUER, subject: 'alice' });
    expect(o).toEqual({ decision: 'denied', reason: 'four_eyes_required' });
  });

  it('refuses a caller record with no subject as four_eyes_required or self_approval, never approved', () => {
    const o = checkFourEyes(approvedWith('bob'), { issuer: ISSUER });
    expect(o.decision).toBe('denied');
  });
});
