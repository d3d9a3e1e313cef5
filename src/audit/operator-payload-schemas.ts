import { z } from 'zod';

/** The payloads of events an operator's command records: an approver enrolled or removed, a source updated. */

const B64URL = /^[A-Za-z0-9_-]+$/;
const CredentialId = z.string().min(1).max(1400).regex(B64URL).describe('WebAuthn credential id (base64url)');
/** A credential's public key as COSE, base64url. */
const CoseKey = z.string().min(1).max(4096).regex(B64URL);

export const ApproverEnrolledPayloadSchema = z.strictObject({
  credential_id: CredentialId,
  public_key: CoseKey.describe(
    "The credential's public key as COSE (base64url): what `audit verify` checks its assertions with",
  ),
  name: z.string().min(1).max(100).describe('Who or which device it is, as given at enrolment'),
  subject: z
    .string()
    .min(1)
    .max(256)
    .optional()
    .describe("The person's sign-in subject, as given at enrolment (`--subject`)"),
  enrolled_at: z.string().max(40).describe('When it was enrolled (ISO 8601)'),
});

export const ApproverRemovedPayloadSchema = z.strictObject({
  credential_id: CredentialId,
  public_key: CoseKey.describe("The removed credential's public key (COSE, base64url)"),
  name: z.string().min(1).max(100).describe('Its name, as given at enrolment'),
  subject: z.string().min(1).max(256).optional().describe('Its subject, as given at enrolment'),
  removed_at: z.string().max(40).describe('When it was removed (ISO 8601)'),
});

/** `skills-mcp sources update`: a pinned git source fetched again, at the commit the configuration names. */
export const SourceUpdatedPayloadSchema = z.strictObject({
  url: z
    .string()
    .min(1)
    .max(2048)
    .describe('The repository URL (the configuration refuses one holding a password)'),
  path: z.string().min(1).max(1024).describe('The skills folder inside the repository'),
  ref: z.string().min(1).max(255).describe('The ref as configured: the commit, or the moving ref resolved'),
  old_commit: z
    .string()
    .regex(/^[0-9a-f]{40}$/)
    .nullable()
    .describe('The commit the checkout held before, null when there was none (or its pin was unreadable)'),
  new_commit: z
    .string()
    .regex(/^[0-9a-f]{40}$/)
    .describe('The commit fetched and served from now on'),
});
