import {
  ApprovalDecidedPayloadSchema,
  ApprovalRequestedPayloadSchema,
} from '../audit/approval-payload-schemas.js';
import { ToolCallRequestedPayloadSchema } from '../audit/call-payload-schemas.js';
import {
  ApproverEnrolledPayloadSchema,
  ApproverRemovedPayloadSchema,
} from '../audit/operator-payload-schemas.js';
import type { CallerRecord } from '../audit/caller-record-schema.js';
import type { HashedFields } from '../audit/event-hash.js';
import type { PasskeyEvidence } from '../approvals/passkey-evidence.js';

/** A passkey's enrolment or removal, as the audit log records it. */
export interface CredentialChange {
  eventId: number;
  kind: 'enrolled' | 'removed';
  credentialId: string;
  publicKey: string;
  name: string;
  /** The subject given at enrolment (`--subject`), if any. */
  subject?: string;
}

/** One `approval_decided` that carries a passkey assertion, with what its call's own request recorded. */
export interface PasskeyApproval {
  eventId: number;
  callId: string;
  decision: string;
  approvalKey: string;
  evidence: PasskeyEvidence;
  /** Who the decision names as its approver (`approver.person`), when it names an enrolled person. */
  approverPerson?: PasskeyEvidence['person'];
  /** From the call's `tool_call_requested`; undefined when the log has none (or it does not parse). */
  request?: {
    approvalKey: string | null;
    bundleSha256: string | null;
    inputSha256: string;
    /** The signed-in caller who made the call, when one did. */
    caller?: CallerRecord;
  };
}

/** What the passkey check reads of a log: enrolments, removals and passkey approvals, in log order. */
export interface PasskeyRecords {
  changes: CredentialChange[];
  approvals: PasskeyApproval[];
  /**
   * Events that should hold a passkey record but do not parse as one, or lack one: an approval of a call whose
   * `approval_requested` says it needs a passkey (or four eyes) without that evidence, or the start of such a call
   * with no approval before it.
   */
  malformed: { eventId: number; callId: string | null; reason: string }[];
}

const APPROVING: ReadonlySet<string> = new Set(['approved', 'approved_for_session']);
const RUN_STATUSES: ReadonlySet<string> = new Set(['ok', 'error', 'timeout', 'sandbox_denied']);

/** Whether a `tool_call_finished` says a script ran: a run's status, or anything of a process or its output. */
function recordsRun(payload: unknown): boolean {
  const p = (typeof payload === 'object' && payload !== null ? payload : {}) as Record<string, unknown>;
  return (
    RUN_STATUSES.has(String(p.status)) ||
    (p.exit_code !== null && p.exit_code !== undefined) ||
    (p.stdout_sha256 !== null && p.stdout_sha256 !== undefined) ||
    p.signal !== undefined ||
    p.workspace_changes !== undefined ||
    (Array.isArray(p.artifacts) && p.artifacts.length > 0)
  );
}

/**
 * Collects the passkey records of a log from its events, fed in order (`add` per event, then `done`). Keeps only a
 * request's three digests (and its caller) per call, so a long log costs little.
 */
export function collectPasskeyRecords(): {
  add: (e: HashedFields) => void;
  done: () => PasskeyRecords;
} {
  const requests = new Map<string, NonNullable<PasskeyApproval['request']>>();
  /** What the calls asked about need of their approval, from `approval_requested`. */
  const needs = new Map<string, { fourEyes: boolean }>();
  /** Calls of `needs` with an approving decision recorded (judged where it is recorded). */
  const approved = new Set<string>();
  /** Calls of `needs` already named for running without one. */
  const ranUnapproved = new Set<string>();
  const out: PasskeyRecords = { changes: [], approvals: [], malformed: [] };
  const bad = (e: HashedFields, reason: string) =>
    out.malformed.push({ eventId: e.event_id, callId: e.call_id, reason });
  return {
    add: (e) => {
      if (e.type === 'tool_call_requested' && e.call_id !== null) {
        const r = ToolCallRequestedPayloadSchema.safeParse(e.payload);
        if (r.success)
          requests.set(e.call_id, {
            approvalKey: r.data.approval_key ?? null,
            bundleSha256: r.data.bundle_sha256 ?? null,
            inputSha256: r.data.input_sha256,
            ...(r.data.caller === undefined ? {} : { caller: r.data.caller }),
          });
      } else if (e.type === 'approval_requested' && e.call_id !== null) {
        const r = ApprovalRequestedPayloadSchema.safeParse(e.payload);
        if (!r.success) return;
        const fourEyes = r.data.four_eyes_required === true;
        if (r.data.passkey_required === true || fourEyes) needs.set(e.call_id, { fourEyes });
      } else if (e.type === 'approver_enrolled' || e.type === 'approver_removed') {
        const r = (
          e.type === 'approver_enrolled' ? ApproverEnrolledPayloadSchema : ApproverRemovedPayloadSchema
        ).safeParse(e.payload);
        if (!r.success) return void bad(e, `the ${e.type} record does not parse`);
        out.changes.push({
          eventId: e.event_id,
          kind: e.type === 'approver_enrolled' ? 'enrolled' : 'removed',
          credentialId: r.data.credential_id,
          publicKey: r.data.public_key,
          name: r.data.name,
          ...(r.data.subject === undefined ? {} : { subject: r.data.subject }),
        });
      } else if (
        (e.type === 'tool_call_started' || (e.type === 'tool_call_finished' && recordsRun(e.payload))) &&
        e.call_id !== null
      ) {
        // Only an approval lets a call that needed a passkey run: a start (or an end that says it ran) after a
        // denial, or with no decision (the log's order rules hold back only its end), is one no passkey approved.
        if (needs.has(e.call_id) && !approved.has(e.call_id) && !ranUnapproved.has(e.call_id)) {
          ranUnapproved.add(e.call_id);
          bad(
            e,
            `the call needed a passkey approval, and it was ${e.type === 'tool_call_started' ? 'started' : 'recorded as run'} without one`,
          );
        }
      } else if (e.type === 'approval_decided') {
        const p = e.payload as { passkey?: { four_eyes?: unknown } | null; decision?: unknown } | null;
        const need = e.call_id === null ? undefined : needs.get(e.call_id);
        if (need !== undefined && typeof p?.decision === 'string' && APPROVING.has(p.decision)) {
          approved.add(e.call_id!);
          if (p.passkey === undefined)
            return void bad(
              e,
              'the call needed a passkey approval, and its approval holds no passkey assertion',
            );
          if (need.fourEyes && p.passkey?.four_eyes !== true)
            return void bad(
              e,
              'the call needed four eyes, and its approval is not recorded as a four-eyes one',
            );
        }
        if (p?.passkey === undefined) return;
        const r = ApprovalDecidedPayloadSchema.safeParse(e.payload);
        if (!r.success || r.data.passkey === undefined || e.call_id === null)
          return void bad(e, 'the passkey assertion does not parse');
        const request = requests.get(e.call_id);
        out.approvals.push({
          eventId: e.event_id,
          callId: e.call_id,
          decision: r.data.decision,
          approvalKey: r.data.approval_key,
          evidence: r.data.passkey,
          ...(r.data.approver?.person === undefined ? {} : { approverPerson: r.data.approver.person }),
          ...(request === undefined ? {} : { request }),
        });
      }
    },
    done: () => out,
  };
}
