import { randomBytes } from 'node:crypto';
import { SkillsError } from '../errors.js';
import type { ApproverCredential } from './approvers-file.js';

/** WebAuthn's RP id for a loopback page: `localhost` (an IP address is not a valid RP id). */
export const PASSKEY_RP_ID = 'localhost';

/**
 * The COSE algorithms a passkey may sign with: EdDSA, ES256, RS256. Not the library's default on a Node with
 * post-quantum WebCrypto (24.7 and later), which offers ML-DSA-44 first: its 2,420-byte signatures do not fit the
 * audit log's passkey evidence, and `audit verify` on Node 20 or 22 could not check them.
 */
export const PASSKEY_ALGORITHMS = [-8, -7, -257] as const;

export interface Enrolment {
  /** The registration options for the browser (one challenge per enrolment; asking again replaces it). */
  options(): Promise<unknown>;
  /** Verifies the browser's registration response; the new credential, or an error saying why not. */
  finish(response: unknown): Promise<ApproverCredential>;
}

/**
 * One passkey enrolment on the page at `origin` (`http://localhost:PORT`): user verification required, a resident
 * key preferred, no attestation (the person enrolling is the one at the terminal: who made the device is not the
 * question). The library is loaded when an enrolment starts.
 */
export function createEnrolment(opts: {
  label: string;
  /** The person's sign-in subject, when given (`--subject`). */
  subject?: string | undefined;
  origin: string;
  enrolled: readonly ApproverCredential[];
  now?: () => Date;
}): Enrolment {
  let challenge: string | undefined;
  const options = async () => {
    const { generateRegistrationOptions } = await import('@simplewebauthn/server');
    const o = await generateRegistrationOptions({
      rpName: 'skills-mcp approvals',
      rpID: PASSKEY_RP_ID,
      userName: opts.label,
      userID: randomBytes(16),
      attestationType: 'none',
      authenticatorSelection: { residentKey: 'preferred', userVerification: 'required' },
      excludeCredentials: opts.enrolled.map((c) => ({ id: c.id })),
      supportedAlgorithmIDs: [...PASSKEY_ALGORITHMS],
      timeout: 120_000,
    });
    challenge = o.challenge;
    return o;
  };
  const finish = async (response: unknown): Promise<ApproverCredential> => {
    const expected = challenge;
    challenge = undefined;
    if (expected === undefined) throw new SkillsError('APPROVAL_DENIED', 'no enrolment was started');
    const { verifyRegistrationResponse } = await import('@simplewebauthn/server');
    let v;
    try {
      v = await verifyRegistrationResponse({
        response: response as Parameters<typeof verifyRegistrationResponse>[0]['response'],
        expectedChallenge: expected,
        expectedOrigin: opts.origin,
        expectedRPID: PASSKEY_RP_ID,
        requireUserVerification: true,
      });
    } catch (err) {
      throw new SkillsError('APPROVAL_DENIED', 'the passkey could not be verified', { cause: err });
    }
    if (!v.verified) throw new SkillsError('APPROVAL_DENIED', 'the passkey could not be verified');
    const c = v.registrationInfo.credential;
    if (opts.enrolled.some((e) => e.id === c.id))
      throw new SkillsError('APPROVAL_DENIED', 'this passkey is already enrolled');
    return {
      id: c.id,
      public_key: Buffer.from(c.publicKey).toString('base64url'),
      counter: c.counter,
      label: opts.label,
      ...(opts.subject === undefined ? {} : { subject: opts.subject }),
      transports: (c.transports ?? []).slice(0, 8),
      enrolled_at: (opts.now ?? (() => new Date()))().toISOString(),
    };
  };
  return { options, finish };
}
