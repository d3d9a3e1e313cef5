import * as z from 'zod';
import { APPROVAL_DECISIONS } from './approval-vocabulary.js';

const B64URL = /^[A-Za-z0-9_-]*$/;
const Sha256 = z.string().regex(/^[0-9a-f]{64}$/);
const b64url = (max: number) => z.string().min(1).max(max).regex(B64URL);

/** What a passkey approval's challenge is the digest of: the call, exactly what runs, the decision and a nonce. */
export const PasskeyChallengeInputsSchema = z.strictObject({
  call_id: z.string().min(1).max(128).describe('The call approved'),
  approval_key: Sha256.describe("The call's approval key"),
  bundle_sha256: Sha256.describe("Content binding of the call's skill"),
  input_sha256: Sha256.describe("sha256 of the call's canonical JSON input"),
  decision: z.enum(APPROVAL_DECISIONS).describe('The decision the person signed'),
  nonce: b64url(64).describe('Random, issued once for this call and decision'),
});

export type PasskeyChallengeInputs = z.infer<typeof PasskeyChallengeInputsSchema>;

/** Whose passkey it is: its enrolment's name and subject, as the approvers list held them when it verified. */
export const PasskeyPersonSchema = z
  .strictObject({
    name: z.string().min(1).max(100).describe('The name given at enrolment (`--name`)'),
    subject: z.string().min(1).max(256).optional().describe('The subject given at enrolment (`--subject`)'),
  })
  .describe('The enrolled person whose passkey signed');

export type PasskeyPerson = z.infer<typeof PasskeyPersonSchema>;

/** A verified passkey assertion, as the audit log keeps it: enough to check it again offline. */
export const PasskeyEvidenceSchema = z
  .strictObject({
    credential_id: b64url(1400).describe('The enrolled credential that signed (base64url)'),
    authenticator_data_b64: b64url(2048).describe('authenticatorData as signed (base64url)'),
    client_data_json: b64url(4096).describe('clientDataJSON as the browser made it (base64url)'),
    signature: b64url(1024).describe(
      'The signature over authenticatorData ‖ sha256(clientDataJSON) (base64url)',
    ),
    challenge: PasskeyChallengeInputsSchema.describe('What the challenge binds (it is their digest)'),
    person: PasskeyPersonSchema.optional(),
    console_origin: z
      .string()
      .max(32)
      .regex(/^http:\/\/localhost:\d{1,5}$/)
      .optional()
      .describe(
        "The approval console's origin (http://localhost:PORT) the assertion was verified against: `audit verify` " +
          "requires the assertion's origin to be this one (absent in logs from before it was recorded)",
      ),
    four_eyes: z
      .literal(true)
      .optional()
      .describe(
        'The call needed four eyes (`approval.require.four_eyes`): `audit verify` requires the enrolled person ' +
          '(with a subject) in the evidence and as the approver',
      ),
  })
  .describe('The passkey assertion that approved the call');

export type PasskeyEvidence = z.infer<typeof PasskeyEvidenceSchema>;
