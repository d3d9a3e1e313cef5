import { randomBytes } from 'node:crypto';
import type { ApprovalDecision } from '../approvals/approval-decision.js';
import { SkillsError } from '../errors.js';
import type { Logger } from '../log.js';
import type { ApproverStore } from './approver-store.js';
import { PASSKEY_RP_ID } from './enroll-ceremony.js';
import { passkeyChallenge } from './passkey-challenge.js';
import type { PasskeyChallengeInputs, PasskeyEvidence } from '../approvals/passkey-evidence.js';

/** What the challenge of a call binds, from its audit record (`tool_call_requested`). */
export type CallBinding = Omit<PasskeyChallengeInputs, 'decision' | 'nonce'>;

/** How long an issued challenge may be answered. */
const CHALLENGE_MS = 120_000;

export interface ConsolePasskeys {
  /**
   * True when at least one passkey is enrolled: the console then approves only with one. True as well when the store
   * cannot be read (fail closed: a plain click does not approve).
   */
  enrolled(): Promise<boolean>;
  /** Issues the one challenge for `approvalId` and `decision` (asking again replaces it). */
  options(approvalId: string, binding: CallBinding, decision: ApprovalDecision): Promise<unknown>;
  /**
   * Verifies an assertion for `approvalId` and `decision` against the challenge issued for exactly those (used
   * up either way), an enrolled credential, user verification, the origin and the RP id. The evidence to record.
   */
  verify(
    approvalId: string,
    decision: ApprovalDecision,
    response: unknown,
    origin: string,
  ): Promise<PasskeyEvidence>;
}

const refuse = (message: string, cause?: unknown) =>
  new SkillsError('APPROVAL_DENIED', message, cause === undefined ? {} : { cause });

/**
 * The console's passkey checks, against the enrolled passkeys of `store` (read afresh each time: enrol or remove
 * while it runs).
 */
export function createConsolePasskeys(opts: {
  store: ApproverStore;
  log?: Logger;
  now?: () => number;
}): ConsolePasskeys {
  const now = opts.now ?? Date.now;
  const issued = new Map<string, { inputs: PasskeyChallengeInputs; challenge: string; at: number }>();
  const approvers = () => opts.store.list();

  const options: ConsolePasskeys['options'] = async (approvalId, binding, decision) => {
    const { generateAuthenticationOptions } = await import('@simplewebauthn/server');
    const inputs = { ...binding, decision, nonce: randomBytes(24).toString('base64url') };
    const challenge = passkeyChallenge(inputs);
    issued.set(approvalId, { inputs, challenge, at: now() });
    return generateAuthenticationOptions({
      rpID: PASSKEY_RP_ID,
      challenge: Buffer.from(challenge, 'base64url'),
      allowCredentials: (await approvers()).map((a) => ({ id: a.id })),
      userVerification: 'required',
      timeout: CHALLENGE_MS,
    });
  };

  const verify: ConsolePasskeys['verify'] = async (approvalId, decision, response, origin) => {
    const entry = issued.get(approvalId);
    issued.delete(approvalId);
    if (entry === undefined || now() - entry.at > CHALLENGE_MS)
      throw refuse('no passkey challenge is open for this approval: try again');
    if (entry.inputs.decision !== decision) throw refuse('the passkey was asked for another decision');
    const r = response as { id?: unknown; response?: Record<string, unknown> } | null;
    const all = await approvers();
    const credential = all.find((a) => typeof r?.id === 'string' && a.id === r.id);
    if (credential === undefined) throw refuse('this passkey is not enrolled');
    const { verifyAuthenticationResponse } = await import('@simplewebauthn/server');
    let v;
    try {
      v = await verifyAuthenticationResponse({
        response: response as Parameters<typeof verifyAuthenticationResponse>[0]['response'],
        expectedChallenge: entry.challenge,
        expectedOrigin: origin,
        expectedRPID: PASSKEY_RP_ID,
        credential: {
          id: credential.id,
          publicKey: Buffer.from(credential.public_key, 'base64url'),
          counter: credential.counter,
        },
        requireUserVerification: true,
      });
    } catch (err) {
      throw refuse('the passkey assertion does not verify', err);
    }
    if (!v.verified || !v.authenticationInfo.userVerified)
      throw refuse('the passkey assertion does not verify');
    if (v.authenticationInfo.newCounter !== credential.counter)
      await opts.store.setCounter(credential.id, v.authenticationInfo.newCounter);
    const body = r!.response!;
    return {
      credential_id: credential.id,
      authenticator_data_b64: String(body.authenticatorData),
      client_data_json: String(body.clientDataJSON),
      signature: String(body.signature),
      challenge: entry.inputs,
      person: {
        name: credential.label,
        ...(credential.subject === undefined ? {} : { subject: credential.subject }),
      },
      console_origin: origin,
    };
  };

  const enrolled = async () => {
    try {
      return (await approvers()).length > 0;
    } catch (err) {
      opts.log?.warn({ err }, 'could not read the enrolled passkeys: approving needs one');
      return true;
    }
  };
  return { enrolled, options, verify };
}
