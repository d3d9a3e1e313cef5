import { createHash } from 'node:crypto';
import type { CallerRecord } from '../audit/payload-schemas.js';

/**
 * Whether a passkey enrolled for `subject` is the caller's own: the same subject, or, when the log keeps only
 * subject digests (`http.oauth.hash_subjects`), the same sha256.
 */
export function isSamePerson(caller: CallerRecord, subject: string): boolean {
  if (caller.subject !== undefined) return caller.subject === subject;
  return caller.subject_sha256 === createHash('sha256').update(subject, 'utf8').digest('hex');
}
