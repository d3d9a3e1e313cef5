import { z } from 'zod';
import { Sha256Schema } from './payload-fields.js';

/**
 * A signed-in caller (HTTP with OAuth) as the log holds it: the issuer, and the subject, or only the subject's
 * sha256 when the operator asked for that (`http.oauth.hash_subjects`). Never a token, never the groups.
 */
export const CallerRecordSchema = z
  .strictObject({
    issuer: z.string().min(1).max(2048).describe('Issuer of the access token (`iss`)'),
    subject: z.string().min(1).max(256).optional().describe('Subject of the access token'),
    subject_sha256: Sha256Schema.optional().describe(
      'sha256 of the subject (UTF-8), when subjects are hashed',
    ),
  })
  .refine((c) => (c.subject === undefined) !== (c.subject_sha256 === undefined), {
    message: 'exactly one of subject and subject_sha256',
  })
  .describe('Who called: the signed-in caller');

export type CallerRecord = z.infer<typeof CallerRecordSchema>;
