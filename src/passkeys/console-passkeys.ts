import { randomBytes } from 'node:crypto';
import type { ApprovalDecision } from '../approvals/approval-decision.js';
import { SkillsError } from '../errors.js';
import { readApprovers, writeApprovers } from './approvers-file.js';
import { PASSKEY_RP_ID } from './enroll-ceremony.js';
import { passkeyChallenge } from './passkey-challenge.js';
import type { PasskeyChallengeInputs, PasskeyEvidence } from '../approvals/passkey-evidence.js';

/** What the challenge of a call binds, from its audit record (`tool_call_requested`). */
export type CallBinding = Omit<PasskeyChallengeInputs, 'decision' | 'nonce'>;

/** How long an issued challenge may be answered. */
const CHALLENGE_MS = 120_000;

export interface ConsolePasskeys {
  /** True when at least one passkey is enrolled: the console then approves only with one. */
  enrolled(): boolean;
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

/** The console's passkey checks, against `<state>/approvers.json` (read afresh each time: enrol while it runs). */
export function createConsolePasskeys(opts: { stateDir: string; now?: () => number }): ConsolePasskeys {
  const now = opts.now ?? Date.now;
  const issued = new Map<string, { inputs: PasskeyChallengeInputs; challenge: string; at: number }>();
  const approvers = () => readApprovers(opts.stateDir);

  const options: ConsolePasskeys['options'] = async (approvalId, binding, decision) => {
    const { generateAuthenticationOptions } = await import('@simplewebauthn/server');
    const inputs = { ...binding, decision, nonce: randomBytes(24).toString('base64url') };
    const challenge = passkeyChallenge(inputs);
    issued.set(approvalId, { inputs, challenge, at: now() });
    return generateAuthenticationOptions({
      rpID: PASSKEY_RP_ID,
      challenge: Buffer.from(challenge, 'base64url'),
      allowCredentials: approvers().map((a) => ({ id: a.id })),
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
    const all = approvers();
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
      writeApprovers(
        opts.stateDir,
        all.map((a) => (a === credential ? { ...a, counter: v.authenticationInfo.newCounter } : a)),
      );
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
    };
  };

  return { enrolled: () => approvers().length > 0, options, verify };
}
