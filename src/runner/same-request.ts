import type { CallRequest, PreparedCall } from './prepare-call.js';
import { requestDigest } from './request-digest.js';

/**
 * Whether a retry asks for exactly the call that is pending: same tool, same skill (folder and name), same script by
 * the same name or module, same arguments and same input ({@link requestDigest}). An approval covers that call only;
 * a retry asking for anything else runs nothing. The one rule for a retry in this process and on another replica
 * (which compares the digest the log recorded when the person was asked).
 */
export function isSameRequest(call: Pick<PreparedCall, 'requestSha256'>, retry: CallRequest): boolean {
  const retried = requestDigest(retry);
  return retried !== undefined && retried === call.requestSha256;
}
