import { createHash } from 'node:crypto';
import { isSamePerson } from '../approvals/is-same-person.js';
import { PASSKEY_RP_ID } from './enroll-ceremony.js';
import { passkeyChallenge } from './passkey-challenge.js';
import type { PasskeyEvidence } from '../approvals/passkey-evidence.js';
import type { CredentialChange, PasskeyApproval, PasskeyRecords } from './passkey-records.js';

/** A passkey approval that does not verify: which call, which event, and why. */
export interface PasskeyFailure {
  eventId: number;
  callId: string | null;
  reason: string;
}

export interface PasskeyCheck {
  /** Passkey approvals checked (each `approval_decided` with an assertion). */
  checked: number;
  /** Passkeys enrolled in the log (enrolment events). */
  enrolled: number;
  failures: PasskeyFailure[];
}

/** The approval console's origin: a loopback page on `localhost`, any port. */
const CONSOLE_ORIGIN = /^http:\/\/localhost:\d{1,5}$/;
const FLAG_UP = 0x01;
const FLAG_UV = 0x04;

/** The enrolment in force for `credentialId` at `eventId` (Infinity: the log's end): enrolled before it, not removed since. */
export function enrolmentAt(changes: readonly CredentialChange[], credentialId: string, eventId: number) {
  let current: CredentialChange | undefined;
  let removed: CredentialChange | undefined;
  for (const c of changes) {
    if (c.eventId >= eventId) break;
    if (c.credentialId !== credentialId) continue;
    if (c.kind === 'enrolled') [current, removed] = [c, undefined];
    else [current, removed] = [undefined, c];
  }
  return { current, removed };
}

/** What the approval's challenge inputs say that its call's own records do not; undefined when they agree. */
function bindingMismatch(a: PasskeyApproval): string | undefined {
  const c = a.evidence.challenge;
  if (a.request === undefined) return 'the log holds no request for the call';
  if (c.call_id !== a.callId) return `the assertion was made for another call (${c.call_id})`;
  if (c.approval_key !== a.approvalKey || c.approval_key !== a.request.approvalKey)
    return "the assertion names another approval key than the call's";
  if (c.bundle_sha256 !== a.request.bundleSha256) return "the assertion names another bundle than the call's";
  if (c.input_sha256 !== a.request.inputSha256) return "the assertion names another input than the call's";
  if (c.decision !== a.decision)
    return `the assertion signs "${c.decision}", the log records "${a.decision}"`;
  return undefined;
}

/** What the approval says of whose passkey it was that its enrolment does not; undefined when they agree. */
function personMismatch(person: PasskeyEvidence['person'], enrolment: CredentialChange): string | undefined {
  if (person === undefined) return undefined;
  const who = (p: { name: string; subject?: string | undefined }) =>
    `${JSON.stringify(p.name)}${p.subject === undefined ? ' (no subject)' : ` (subject ${JSON.stringify(p.subject)})`}`;
  return person.name === enrolment.name && person.subject === enrolment.subject
    ? undefined
    : `the approval names ${who(person)} as the approver, the passkey's enrolment at event ${enrolment.eventId} ${who(enrolment)}`;
}

/**
 * Checks every passkey approval in `records` offline, in log order: the credential was enrolled in the log before the
 * decision and not removed since, and the person the approval names (name, subject; in its passkey evidence and as its approver) is that enrolment's; the challenge is recomputed from the call's own approval key, bundle and input
 * digests and the decision recorded; the signature verifies with the public key the enrolment recorded, over
 * authenticatorData ‖ sha256(clientDataJSON); the origin is the console's (`http://localhost:PORT`; exactly the one
 * the evidence records as the console's, when it records one), a four-eyes approval names its person, who is not the
 * call's signed-in caller (as the runtime judges it, `isSamePerson`), the RP id
 * `localhost`, the user was verified; a credential's signature counter only grows (when it keeps one).
 */
export async function verifyPasskeyApprovals(records: PasskeyRecords): Promise<PasskeyCheck> {
  const failures: PasskeyFailure[] = records.malformed.map((m) => ({ ...m }));
  const counters = new Map<string, number>();
  const { verifyAuthenticationResponse } = records.approvals.length
    ? await import('@simplewebauthn/server')
    : { verifyAuthenticationResponse: undefined };
  for (const a of records.approvals) {
    const fail = (reason: string) => failures.push({ eventId: a.eventId, callId: a.callId, reason });
    const ev = a.evidence;
    const mismatch = bindingMismatch(a);
    if (mismatch !== undefined) {
      fail(mismatch);
      continue;
    }
    const { current, removed } = enrolmentAt(records.changes, ev.credential_id, a.eventId);
    if (current === undefined) {
      fail(
        removed === undefined
          ? `passkey ${ev.credential_id} is not enrolled in the log`
          : `passkey ${ev.credential_id} (${removed.name}) was removed at event ${removed.eventId}`,
      );
      continue;
    }
    if (
      ev.four_eyes === true &&
      (ev.person?.subject === undefined || a.approverPerson?.subject === undefined)
    ) {
      fail(
        'the call needed four eyes, and the approval names no enrolled person (with a subject) as its approver',
      );
      continue;
    }
    const named = personMismatch(ev.person, current) ?? personMismatch(a.approverPerson, current);
    if (named !== undefined) {
      fail(named);
      continue;
    }
    const caller = a.request?.caller;
    if (ev.four_eyes === true && (caller === undefined || isSamePerson(caller, current.subject ?? ''))) {
      fail(
        caller === undefined
          ? 'the call needed four eyes, and the log records no signed-in caller for it'
          : `the call needed four eyes, and it was approved with the caller's own passkey (enrolled at event ${current.eventId})`,
      );
      continue;
    }
    let origin: unknown;
    try {
      origin = (
        JSON.parse(Buffer.from(ev.client_data_json, 'base64url').toString('utf8')) as { origin?: unknown }
      ).origin;
    } catch {
      fail('its clientDataJSON is not JSON');
      continue;
    }
    if (typeof origin !== 'string' || !CONSOLE_ORIGIN.test(origin)) {
      fail(`it was made on ${JSON.stringify(origin)}, not the approval console (http://localhost:PORT)`);
      continue;
    }
    if (ev.console_origin !== undefined && origin !== ev.console_origin) {
      fail(`it was made on ${origin}, the approval console was at ${ev.console_origin}`);
      continue;
    }
    const authData = Buffer.from(ev.authenticator_data_b64, 'base64url');
    const flags = authData[32];
    if (authData.length < 37 || flags === undefined) {
      fail('its authenticatorData is too short');
      continue;
    }
    if (!authData.subarray(0, 32).equals(createHash('sha256').update(PASSKEY_RP_ID).digest())) {
      fail(`it was made for another RP id than ${PASSKEY_RP_ID}`);
      continue;
    }
    if ((flags & FLAG_UP) === 0 || (flags & FLAG_UV) === 0) {
      fail('the authenticator did not verify the user');
      continue;
    }
    let verified = false;
    try {
      const v = await verifyAuthenticationResponse!({
        response: {
          id: ev.credential_id,
          rawId: ev.credential_id,
          type: 'public-key',
          response: {
            authenticatorData: ev.authenticator_data_b64,
            clientDataJSON: ev.client_data_json,
            signature: ev.signature,
          },
          clientExtensionResults: {},
        },
        expectedChallenge: passkeyChallenge(ev.challenge),
        expectedOrigin: origin,
        expectedRPID: PASSKEY_RP_ID,
        expectedType: 'webauthn.get',
        // The counter is judged below, in log order, with its own message.
        credential: {
          id: ev.credential_id,
          publicKey: Buffer.from(current.publicKey, 'base64url'),
          counter: 0,
        },
        requireUserVerification: true,
      });
      verified = v.verified && v.authenticationInfo.userVerified;
    } catch (err) {
      fail(`the assertion does not verify: ${(err as Error).message}`);
      continue;
    }
    if (!verified) {
      fail('the signature does not verify with the enrolled public key');
      continue;
    }
    const counter = authData.readUInt32BE(33);
    const last = counters.get(ev.credential_id);
    if (last !== undefined && (counter > 0 || last > 0) && counter <= last)
      fail(
        `the signature counter went from ${last} to ${counter}: a cloned passkey, or a replayed assertion`,
      );
    counters.set(ev.credential_id, Math.max(counter, last ?? 0));
  }
  return {
    checked: records.approvals.length,
    enrolled: records.changes.filter((c) => c.kind === 'enrolled').length,
    failures,
  };
}
