import { createHash } from 'node:crypto';
import type { CallerRecord } from '../audit/caller-record-schema.js';

const sha256 = (s: string) => createHash('sha256').update(s, 'utf8').digest('hex');

/** A subject as people write it: Unicode NFKC, no surrounding whitespace, lower case. */
const folded = (s: string) => s.normalize('NFKC').trim().toLowerCase();

/**
 * Whether a passkey enrolled for `subject` is the caller's own. Judged to fail closed (a false "same" only refuses):
 * the same subject up to Unicode form, surrounding whitespace and case (an issuer may spell an e-mail subject
 * `Alice@…` one day and `alice@…` the next), or the enrolment giving the caller's subject digest itself. When the
 * log keeps only subject digests (`http.oauth.hash_subjects`), the sha256 of the subject as enrolled or folded. A caller
 * without a subject is judged the same (fail closed).
 */
export function isSamePerson(caller: CallerRecord, subject: string): boolean {
  const given = subject.trim().toLowerCase();
  if (caller.subject !== undefined)
    return folded(caller.subject) === folded(subject) || sha256(caller.subject) === given;
  // No subject at all: nobody can be told apart from this caller.
  if (caller.subject_sha256 === undefined) return true;
  const hashed = caller.subject_sha256.toLowerCase();
  return hashed === sha256(subject) || hashed === sha256(folded(subject)) || hashed === given;
}
