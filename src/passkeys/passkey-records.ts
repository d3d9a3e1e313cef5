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
import { createPasskeyRuns } from './passkey-runs.js';

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
   * `approval_requested` says it needs a passkey (or four eyes) without that evidence, or a run of such a call
   * with no approval before it, or a second one on its approval (`createPasskeyRuns`).
   */
  malformed: { eventId: number; callId: string | null; reason: string }[];
}

const APPROVING: ReadonlySet<string> = new Set(['approved', 'approved_for_session']);

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
  const runs = createPasskeyRuns();
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
        if (r.data.passkey_required !== true && !fourEyes) return;
        needs.set(e.call_id, { fourEyes });
        runs.need(e.call_id);
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
      } else if (e.type === 'tool_call_started' || e.type === 'tool_call_finished') {
        const reason = runs.judge(e);
        if (reason !== undefined) bad(e, reason);
      } else if (e.type === 'approval_decided') {
        const p = e.payload as { passkey?: { four_eyes?: unknown } | null; decision?: unknown } | null;
        const need = e.call_id === null ? undefined : needs.get(e.call_id);
        if (need !== undefined && typeof p?.decision === 'string' && APPROVING.has(p.decision)) {
          runs.approve(e.call_id!);
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
