import { createHash } from 'node:crypto';
import { canonicalJson } from '../canonical-json.js';
import type { PasskeyChallengeInputs } from '../approvals/passkey-evidence.js';

/**
 * The WebAuthn challenge for one decision on one call: sha256 of the canonical JSON of its inputs, base64url. The
 * person's authenticator signs it, so the signature is over exactly this call, these bytes and this decision.
 */
export function passkeyChallenge(inputs: PasskeyChallengeInputs): string {
  return createHash('sha256').update(canonicalJson(inputs)).digest('base64url');
}
