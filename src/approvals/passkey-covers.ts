import type { PasskeyChallengeInputs, PasskeyEvidence } from './passkey-evidence.js';

/**
 * Whether passkey evidence approves exactly this call and decision: its challenge names the call, its approval key,
 * bundle and input digests and the decision (the console verified the signature over that challenge).
 */
export function passkeyCovers(
  evidence: PasskeyEvidence | undefined,
  call: Omit<PasskeyChallengeInputs, 'nonce'>,
): boolean {
  const c = evidence?.challenge;
  return (
    c !== undefined &&
    c.call_id === call.call_id &&
    c.approval_key === call.approval_key &&
    c.bundle_sha256 === call.bundle_sha256 &&
    c.input_sha256 === call.input_sha256 &&
    c.decision === call.decision
  );
}
