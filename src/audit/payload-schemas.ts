import type { z } from 'zod';
import {
  ApprovalDecidedPayloadSchema,
  ApprovalRequestedPayloadSchema,
  LoopGuardTrippedPayloadSchema,
  SessionAbortedPayloadSchema,
} from './approval-payload-schemas.js';
import {
  PolicyDecidedPayloadSchema,
  ToolCallFinishedPayloadSchema,
  ToolCallInterruptedPayloadSchema,
  ToolCallRequestedPayloadSchema,
  ToolCallStartedPayloadSchema,
} from './call-payload-schemas.js';
import type { EventType } from './event-types.js';
import {
  ApproverEnrolledPayloadSchema,
  ApproverRemovedPayloadSchema,
  SourceUpdatedPayloadSchema,
} from './operator-payload-schemas.js';
import {
  SessionEndedPayloadSchema,
  SessionErrorPayloadSchema,
  SessionStartedPayloadSchema,
} from './session-payload-schemas.js';

/*
 * Payloads hold hashes, sizes, counts, key names and our own identifiers: never env values, file contents,
 * stdout/stderr text or raw inputs. Every schema is strict (unknown keys are refused), so a raw value cannot
 * ride along by accident; `assertPrivate` adds a key-name check for the one open-ended record (sandbox evidence).
 * Numbers are integers only (timestamps and durations in ms): the hash chain's canonical JSON refuses floats.
 * The schemas live by concept: `call-payload-schemas.ts`, `approval-payload-schemas.ts`,
 * `session-payload-schemas.ts`, `operator-payload-schemas.ts`, on the shared fields of `payload-fields.ts` and
 * `caller-record-schema.ts`.
 */

export const payloadSchemas = {
  session_started: SessionStartedPayloadSchema,
  tool_call_requested: ToolCallRequestedPayloadSchema,
  policy_decided: PolicyDecidedPayloadSchema,
  approval_requested: ApprovalRequestedPayloadSchema,
  approval_decided: ApprovalDecidedPayloadSchema,
  loop_guard_tripped: LoopGuardTrippedPayloadSchema,
  session_aborted: SessionAbortedPayloadSchema,
  tool_call_started: ToolCallStartedPayloadSchema,
  tool_call_finished: ToolCallFinishedPayloadSchema,
  tool_call_interrupted: ToolCallInterruptedPayloadSchema,
  session_error: SessionErrorPayloadSchema,
  session_ended: SessionEndedPayloadSchema,
  approver_enrolled: ApproverEnrolledPayloadSchema,
  approver_removed: ApproverRemovedPayloadSchema,
  source_updated: SourceUpdatedPayloadSchema,
} as const satisfies Record<EventType, z.ZodType>;

/** The payload type of each event type. */
export type EventPayloads = { [K in EventType]: z.infer<(typeof payloadSchemas)[K]> };

export type SessionStartedPayload = EventPayloads['session_started'];
export type ToolCallRequestedPayload = EventPayloads['tool_call_requested'];
export type PolicyDecidedPayload = EventPayloads['policy_decided'];
export type ApprovalRequestedPayload = EventPayloads['approval_requested'];
export type ApprovalDecidedPayload = EventPayloads['approval_decided'];
export type LoopGuardTrippedPayload = EventPayloads['loop_guard_tripped'];
export type SessionAbortedPayload = EventPayloads['session_aborted'];
export type ToolCallStartedPayload = EventPayloads['tool_call_started'];
export type ToolCallFinishedPayload = EventPayloads['tool_call_finished'];
export type ToolCallInterruptedPayload = EventPayloads['tool_call_interrupted'];
export type SessionErrorPayload = EventPayloads['session_error'];
export type SessionEndedPayload = EventPayloads['session_ended'];
