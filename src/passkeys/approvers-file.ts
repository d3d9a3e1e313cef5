import { chmodSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import * as z from 'zod';
import { SkillsError } from '../errors.js';

const B64URL = /^[A-Za-z0-9_-]+$/;
const MAX_APPROVERS = 100;

export const ApproverCredentialSchema = z.strictObject({
  id: z.string().min(1).max(1400).regex(B64URL).describe('WebAuthn credential id (base64url)'),
  public_key: z
    .string()
    .min(1)
    .max(4096)
    .regex(B64URL)
    .describe("The credential's public key as COSE (base64url)"),
  counter: z.int().min(0).describe('Signature counter last seen (0 when the authenticator keeps none)'),
  label: z.string().min(1).max(100).describe('Who or which device it is, as given at enrolment'),
  subject: z
    .string()
    .min(1)
    .max(256)
    .optional()
    .describe(
      "The person's sign-in subject (the OAuth `sub`, or `http.oauth.subject_claim`), as given at enrolment: " +
        'who approves with it where four eyes are required',
    ),
  transports: z.array(z.string().max(32)).max(8).default([]).describe('Transports the browser reported'),
  enrolled_at: z.string().max(40).describe('When it was enrolled (ISO 8601)'),
});

export const ApproversFileSchema = z.strictObject({
  version: z.literal(1).describe('Format version'),
  approvers: z.array(ApproverCredentialSchema).max(MAX_APPROVERS).describe('The enrolled passkeys'),
});

export type ApproverCredential = z.infer<typeof ApproverCredentialSchema>;

/** `<state>/approvers.json`: the passkeys whose assertions approve calls. */
export const approversPath = (stateDir: string): string => join(stateDir, 'approvers.json');

/** The enrolled passkeys; none when the file does not exist. A damaged file fails closed (an error, not "none"). */
export function readApprovers(stateDir: string): ApproverCredential[] {
  let text: string;
  try {
    text = readFileSync(approversPath(stateDir), 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw new SkillsError('CONFIG_INVALID', `cannot read ${approversPath(stateDir)}`, { cause: err });
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text.slice(0, 1_000_000));
  } catch (err) {
    throw new SkillsError('CONFIG_INVALID', `${approversPath(stateDir)} is not JSON`, { cause: err });
  }
  const r = ApproversFileSchema.safeParse(parsed);
  if (!r.success)
    throw new SkillsError('CONFIG_INVALID', `${approversPath(stateDir)} is not a list of approvers`, {
      hint: 'Remove it and enroll again with `skills-mcp approvers enroll`.',
    });
  return r.data.approvers;
}

/** Replaces the file (0600, written beside it then renamed over it: a reader sees the old or the new list). */
export function writeApprovers(stateDir: string, approvers: readonly ApproverCredential[]): void {
  const file = approversPath(stateDir);
  mkdirSync(stateDir, { recursive: true, mode: 0o700 });
  const temp = `${file}.${randomBytes(6).toString('hex')}.tmp`;
  try {
    writeFileSync(temp, `${JSON.stringify({ version: 1, approvers }, null, 2)}\n`, {
      mode: 0o600,
      flag: 'wx',
    });
    chmodSync(temp, 0o600);
    renameSync(temp, file);
  } catch (err) {
    rmSync(temp, { force: true });
    throw err;
  }
}
