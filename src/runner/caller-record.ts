import { createHash } from 'node:crypto';
import type { Approver, ApprovalChannel } from '../audit/approval-payload-schemas.js';
import type { CallerRecord } from '../audit/caller-record-schema.js';
import type { Config } from '../config/config-schema.js';
import type { Caller } from '../gate/index.js';
import type { ApprovalOutcome } from '../approvals/approval-decision.js';

/**
 * The signed-in caller as the audit log records it: issuer and subject, or only the subject's sha256 (UTF-8, as
 * `printf %s SUBJECT | sha256sum` prints it) with `http.oauth.hash_subjects`. Groups are not recorded.
 */
export function callerRecord(caller: Caller | undefined, config: Config): CallerRecord | undefined {
  if (caller === undefined) return undefined;
  return config.http.oauth?.hash_subjects === true
    ? {
        issuer: caller.issuer,
        subject_sha256: createHash('sha256').update(caller.subject, 'utf8').digest('hex'),
      }
    : { issuer: caller.issuer, subject: caller.subject };
}

/** `{caller}` to spread into a payload, or nothing. */
export const withCaller = (record: CallerRecord | undefined): { caller?: CallerRecord } =>
  record === undefined ? {} : { caller: record };

/**
 * Who decided, when a person answered: in their own client (the session's caller, when signed in), in the approval
 * console (with the enrolled person whose passkey it was), or on the terminal. Undefined for decisions nobody made
 * (rules, grants, timeouts, stops), except a refused approval with the caller's own passkey (`self_approval`),
 * which names whose passkey tried.
 */
export function approverOf(
  channel: ApprovalChannel,
  outcome: ApprovalOutcome,
  caller: CallerRecord | undefined,
): Approver | undefined {
  const person = outcome.person ?? outcome.passkey?.person;
  if (outcome.reason === 'self_approval' && person !== undefined) return { kind: 'console', person };
  if (outcome.reason !== 'user' && outcome.reason !== 'declined') return undefined;
  if (channel === 'elicitation') return { kind: 'caller', ...withCaller(caller) };
  if (channel === 'console') return { kind: channel, ...(person === undefined ? {} : { person }) };
  if (channel === 'terminal') return { kind: channel };
  return undefined;
}
