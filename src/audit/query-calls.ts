import type { SqliteDb } from './sqlite/sqlite-db.js';
import { z } from 'zod';
import { SkillsError } from '../errors.js';
import { parseEventRow } from './parse-event-row.js';
import {
  ApprovalChannelSchema,
  ApprovalDecisionSchema,
  ApprovalReasonSchema,
} from './approval-payload-schemas.js';
import { FinishStatusSchema } from './call-payload-schemas.js';
import type { ApprovalRow, ArtifactRow, CallDetail, CallRow, ListCallsFilter } from './types.js';

const int = z.int();
const text = z.string();

const CallDbRowSchema = z
  .strictObject({
    call_id: text,
    session_id: text,
    tool: text,
    skill: text.nullable(),
    script: text.nullable(),
    input_sha256: text,
    input_bytes: int,
    bundle_sha256: text.nullable(),
    approval_key: text.nullable(),
    valid: int,
    requested_event_id: int,
    requested_ts: int,
    policy_decision: z.enum(['allow', 'ask', 'deny']).nullable(),
    policy_rule: text.nullable(),
    risk_level: z.enum(['low', 'medium', 'high']).nullable(),
    approval_decision: ApprovalDecisionSchema.nullable(),
    approval_reason: ApprovalReasonSchema.nullable(),
    started_event_id: int.nullable(),
    started_ts: int.nullable(),
    state: z.enum(['requested', 'started', 'finished', 'interrupted']),
    status: z.union([FinishStatusSchema, z.literal('interrupted')]).nullable(),
    exit_code: int.nullable(),
    duration_ms: int.nullable(),
    terminal_event_id: int.nullable(),
    terminal_ts: int.nullable(),
  })
  .describe('A row of the calls projection');

const ApprovalDbRowSchema = z
  .strictObject({
    call_id: text,
    session_id: text,
    approval_key: text,
    channel: ApprovalChannelSchema,
    requested_event_id: int.nullable(),
    requested_ts: int.nullable(),
    decided_event_id: int.nullable(),
    decided_ts: int.nullable(),
    decision: ApprovalDecisionSchema.nullable(),
    reason: ApprovalReasonSchema.nullable(),
  })
  .describe('A row of the approvals projection');

const ArtifactDbRowSchema = z
  .strictObject({ call_id: text, path: text, sha256: text, bytes: int, event_id: int })
  .describe('A row of the artifacts projection');

function toCall(row: unknown): CallRow {
  const r = parseRow(CallDbRowSchema, row, 'calls');
  return {
    callId: r.call_id,
    sessionId: r.session_id,
    tool: r.tool,
    skill: r.skill,
    script: r.script,
    inputSha256: r.input_sha256,
    inputBytes: r.input_bytes,
    bundleSha256: r.bundle_sha256,
    approvalKey: r.approval_key,
    valid: r.valid === 1,
    requestedEventId: r.requested_event_id,
    requestedTs: r.requested_ts,
    policyDecision: r.policy_decision,
    policyRule: r.policy_rule,
    riskLevel: r.risk_level,
    approvalDecision: r.approval_decision,
    approvalReason: r.approval_reason,
    startedEventId: r.started_event_id,
    startedTs: r.started_ts,
    state: r.state,
    status: r.status,
    exitCode: r.exit_code,
    durationMs: r.duration_ms,
    terminalEventId: r.terminal_event_id,
    terminalTs: r.terminal_ts,
  };
}

/** Calls from the projection, oldest first; `limit` keeps the most recent ones. */
export function listCalls(db: SqliteDb, filter: ListCallsFilter = {}): CallRow[] {
  const where: string[] = [];
  const params: (string | number)[] = [];
  if (filter.sessionId !== undefined) {
    where.push('session_id = ?');
    params.push(filter.sessionId);
  }
  if (filter.skill !== undefined) {
    where.push('skill = ?');
    params.push(filter.skill);
  }
  const clause = where.length > 0 ? `WHERE ${where.join(' AND ')}` : '';
  const limit = filter.limit === undefined ? -1 : Math.max(0, Math.trunc(filter.limit));
  const rows = db
    .prepare(`SELECT * FROM calls ${clause} ORDER BY requested_event_id DESC LIMIT ?`)
    .all(...params, limit);
  return rows.map(toCall).reverse();
}

/** One call with its approval, artifacts and every event, or undefined. */
export function getCall(db: SqliteDb, callId: string): CallDetail | undefined {
  const row = db.prepare('SELECT * FROM calls WHERE call_id = ?').get(callId);
  if (row === undefined) return undefined;
  const a = db.prepare('SELECT * FROM approvals WHERE call_id = ?').get(callId);
  const approval: ApprovalRow | null =
    a === undefined
      ? null
      : (({
          call_id,
          session_id,
          approval_key,
          channel,
          requested_event_id,
          decided_event_id,
          decision,
          reason,
        }) => ({
          callId: call_id,
          sessionId: session_id,
          approvalKey: approval_key,
          channel,
          requestedEventId: requested_event_id,
          decidedEventId: decided_event_id,
          decision,
          reason,
        }))(parseRow(ApprovalDbRowSchema, a, 'approvals'));
  const artifacts: ArtifactRow[] = db
    .prepare('SELECT * FROM artifacts WHERE call_id = ? ORDER BY path')
    .all(callId)
    .map((x) => parseRow(ArtifactDbRowSchema, x, 'artifacts'))
    .map((x) => ({ callId: x.call_id, path: x.path, sha256: x.sha256, bytes: x.bytes, eventId: x.event_id }));
  const events = db
    .prepare('SELECT * FROM events WHERE call_id = ? ORDER BY event_id')
    .all(callId)
    .map(parseEventRow);
  return { call: toCall(row), approval, artifacts, events };
}

/**
 * Call ids that start or end with `fragment` (the end is what lists show: `shortCallId`), at most `limit`: a CLI
 * convenience, which takes a fragment only when exactly one id matches it either way.
 */
export function findCallIds(db: SqliteDb, fragment: string, limit = 10): string[] {
  const starting = db
    .prepare('SELECT call_id FROM calls WHERE call_id >= ? AND call_id < ? ORDER BY call_id LIMIT ?')
    .all(fragment, `${fragment}\uffff`, limit) as { call_id: string }[];
  if (fragment === '') return starting.map((r) => r.call_id);
  // No index helps with an id's end: every call id is read once.
  const ending = db
    .prepare('SELECT call_id FROM calls WHERE substr(call_id, -length(?)) = ? ORDER BY call_id LIMIT ?')
    .all(fragment, fragment, limit) as { call_id: string }[];
  return [...new Set([...starting, ...ending].map((r) => r.call_id))].slice(0, limit);
}

function parseRow<T>(schema: z.ZodType<T>, row: unknown, table: string): T {
  const r = schema.safeParse(row);
  if (r.success) return r.data;
  throw new SkillsError(
    'AUDIT_FAILED',
    `unexpected row in ${table}: ${r.error.issues[0]?.message ?? 'invalid'}`,
    {
      hint: 'The projection may be damaged: rebuild it from events (rebuildProjections).',
    },
  );
}
