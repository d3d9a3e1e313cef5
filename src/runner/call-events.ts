import type { AppendInput } from '../audit/types.js';
import type { ApprovalChannel } from '../audit/approval-payload-schemas.js';
import type { FinishStatus } from '../audit/call-payload-schemas.js';
import type { CallerRecord } from '../audit/caller-record-schema.js';
import type { ApprovalOutcome } from '../approvals/approval-decision.js';
import type { SessionEvent, SessionState } from '../approvals/session-state.js';
import { approverOf, withCaller } from './caller-record.js';
import type { PreparedCall } from './prepare-call.js';

/** Audit events of a call, built as data: the runner writes them (often several in one transaction) before acting. */

export const requestedEvent = (
  sessionId: string,
  callId: string,
  call: PreparedCall,
  caller: CallerRecord | undefined,
): AppendInput => ({
  type: 'tool_call_requested',
  sessionId,
  callId,
  payload: {
    tool: call.req.tool,
    skill: call.skill.name,
    script: call.script,
    ...call.bound.input,
    bundle_sha256: call.bundle.sha256,
    ...(call.env === undefined ? {} : { env_sha256: call.env.id }),
    approval_key: call.bound.approvalKey,
    request_sha256: call.requestSha256,
    valid: true,
    ...withCaller(caller),
  },
});

export const policyEvent = (sessionId: string, callId: string, call: PreparedCall): AppendInput => ({
  type: 'policy_decided',
  sessionId,
  callId,
  payload: {
    decision: call.policy.decision,
    rule: call.policy.rule.slice(0, 256),
    risk: { level: call.risk.level, code: call.risk.code, reason: call.risk.reason.slice(0, 512) },
  },
});

/**
 * A decision and the loop-guard / abort events it implies, plus the gate events to apply once they are durable.
 * `caller` is the session's signed-in caller: the approver when they answered in their own client. `mac` signs the
 * decision for the other replicas sharing the log (`DecisionSigner`).
 */
export function decisionEvents(
  gate: SessionState,
  sessionId: string,
  callId: string,
  key: string,
  outcome: ApprovalOutcome,
  channel: ApprovalChannel,
  o: { caller?: CallerRecord | undefined; mac?: string | undefined } = {},
): { events: AppendInput[]; apply: SessionEvent[] } {
  const apply = gate.eventsFor(key, outcome);
  const approver = approverOf(channel, outcome, o.caller);
  const denials = gate.denialCount(key) + 1;
  const events = apply.map((ev): AppendInput => {
    if (ev.type === 'approval_decided') {
      return {
        type: 'approval_decided',
        sessionId,
        callId,
        payload: {
          approval_key: key,
          decision: outcome.decision,
          reason: outcome.reason,
          channel,
          ...(approver === undefined ? {} : { approver }),
          ...(outcome.passkey === undefined ? {} : { passkey: outcome.passkey }),
          ...(o.mac === undefined ? {} : { mac: o.mac }),
        },
      };
    }
    if (ev.type === 'loop_guard_tripped')
      return { type: 'loop_guard_tripped', sessionId, callId, payload: { approval_key: key, denials } };
    return { type: 'session_aborted', sessionId, callId, payload: { approval_key: key, channel } };
  });
  return { events, apply };
}

export interface FinishDetail {
  code?: string;
  exitCode?: number | null;
  durationMs?: number;
}

/** `tool_call_finished` for a call that ran nothing (refused, invalid, failed before spawn). */
export const finishedEvent = (
  sessionId: string,
  callId: string,
  status: FinishStatus,
  d: FinishDetail = {},
): AppendInput => ({
  type: 'tool_call_finished',
  sessionId,
  callId,
  payload: {
    status,
    exit_code: d.exitCode ?? null,
    duration_ms: Math.max(0, Math.round(d.durationMs ?? 0)),
    stdout_sha256: null,
    stdout_bytes: 0,
    stderr_bytes: 0,
    artifacts: [],
    ...(d.code === undefined ? {} : { error_code: d.code }),
  },
});
