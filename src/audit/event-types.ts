/** Every audit event type, in the order they usually occur. The `events.type` CHECK constraint uses this list. */
export const EVENT_TYPES = [
  'session_started',
  'tool_call_requested',
  'policy_decided',
  'approval_requested',
  'approval_decided',
  'loop_guard_tripped',
  'session_aborted',
  'tool_call_started',
  'tool_call_finished',
  'tool_call_interrupted',
  'session_error',
  'session_ended',
  'approver_enrolled',
  'approver_removed',
  'source_updated',
] as const;

export type EventType = (typeof EVENT_TYPES)[number];

/** Events that belong to one call: `callId` is required and must name a call of the same session. */
export const CALL_EVENT_TYPES = [
  'tool_call_requested',
  'policy_decided',
  'approval_requested',
  'approval_decided',
  'tool_call_started',
  'tool_call_finished',
  'tool_call_interrupted',
] as const satisfies readonly EventType[];

export type CallEventType = (typeof CALL_EVENT_TYPES)[number];

/** Events that close a call. Every requested call gets exactly one. */
export const TERMINAL_EVENT_TYPES = ['tool_call_finished', 'tool_call_interrupted'] as const;

export const isEventType = (value: string): value is EventType =>
  (EVENT_TYPES as readonly string[]).includes(value);

export const isCallEventType = (type: EventType): type is CallEventType =>
  (CALL_EVENT_TYPES as readonly string[]).includes(type);
