/** What binds an approval to a call: its approval key, its input and its bundle, by digest. */
export interface CallBinding {
  approvalKey: string;
  inputSha256: string;
  bundleSha256: string | null;
}

/**
 * A call as the person was asked about it: what binds it and, apart, the digest of its whole request (tool, skill
 * by name and folder, script by the name asked or module, arguments and input; undefined in records of older
 * versions).
 */
export interface AskedCall extends CallBinding {
  requestSha256: string | undefined;
}

/**
 * The one answer to "is this the call the person was asked about?", for a retry in this process, a retry on another
 * replica and another replica's console. What is offered must match in every part it gives: its request digest
 * (a retry: known, and equal), its binding (a call prepared again, a console's card), or both; an offer that
 * gives neither matches nothing. An approval covers that call only; anything else runs nothing.
 */
export function isSameCall(
  asked: AskedCall,
  offered: { requestSha256?: string | undefined; binding?: CallBinding },
): boolean {
  const request = 'requestSha256' in offered;
  if (request && (offered.requestSha256 === undefined || offered.requestSha256 !== asked.requestSha256))
    return false;
  const b = offered.binding;
  if (b === undefined) return request;
  return (
    b.approvalKey === asked.approvalKey &&
    b.inputSha256 === asked.inputSha256 &&
    b.bundleSha256 === asked.bundleSha256
  );
}
