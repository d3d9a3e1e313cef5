import type { CallEventType, EventType } from './event-types.js';
import type { ApprovalChannel, ApprovalDecision, ApprovalReason } from './approval-payload-schemas.js';
import type { FinishStatus } from './call-payload-schemas.js';
import type { EventPayloads, SessionEndedPayload, SessionStartedPayload } from './payload-schemas.js';

/** One committed event, as stored. `payload` holds hashes, sizes and key names only. */
export type AuditEvent<T extends EventType = EventType> = {
  [K in T]: {
    /** 1, 2, 3, … in commit order; the chain runs in this order. */
    eventId: number;
    /** Commit time, integer ms since the epoch. */
    ts: number;
    sessionId: string;
    /** Always set for call events (`tool_call_*`, `policy_decided`, `approval_*`). */
    callId: K extends CallEventType ? string : string | null;
    type: K;
    payload: EventPayloads[K];
    prevHash: string;
    hash: string;
  };
}[T];

/**
 * What `append` takes. `session_started` and `session_ended` go through `startSession` / `endSession`.
 * `callId` is required for call events (optional for `tool_call_requested`: the store makes one);
 * optional for `loop_guard_tripped`, `session_aborted` and `session_error` (the call that caused them).
 */
export type AppendInput = {
  [K in Exclude<EventType, 'session_started' | 'session_ended'>]: {
    type: K;
    sessionId: string;
    payload: EventPayloads[K];
  } & (K extends 'tool_call_requested'
    ? { callId?: string }
    : K extends CallEventType
      ? { callId: string }
      : { callId?: string | null });
}[Exclude<EventType, 'session_started' | 'session_ended'>];

/** Input of `startSession`: the store fills in `owner` (pid + host). */
export type SessionStartInput = Omit<SessionStartedPayload, 'owner'>;

export type CallState = 'requested' | 'started' | 'finished' | 'interrupted';

/** A row of the `calls` projection. */
export interface CallRow {
  callId: string;
  sessionId: string;
  tool: string;
  skill: string | null;
  script: string | null;
  inputSha256: string;
  inputBytes: number;
  bundleSha256: string | null;
  approvalKey: string | null;
  valid: boolean;
  requestedEventId: number;
  requestedTs: number;
  policyDecision: 'allow' | 'ask' | 'deny' | null;
  policyRule: string | null;
  riskLevel: 'low' | 'medium' | 'high' | null;
  approvalDecision: ApprovalDecision | null;
  approvalReason: ApprovalReason | null;
  startedEventId: number | null;
  startedTs: number | null;
  state: CallState;
  /** Finished status, or `interrupted`; null while open. */
  status: FinishStatus | 'interrupted' | null;
  exitCode: number | null;
  durationMs: number | null;
  terminalEventId: number | null;
  terminalTs: number | null;
}

/** A row of the `approvals` projection (one per call that reached the approval step). */
export interface ApprovalRow {
  callId: string;
  sessionId: string;
  approvalKey: string;
  channel: ApprovalChannel;
  requestedEventId: number | null;
  decidedEventId: number | null;
  decision: ApprovalDecision | null;
  reason: ApprovalReason | null;
}

export interface ArtifactRow {
  callId: string;
  path: string;
  sha256: string;
  bytes: number;
  eventId: number;
}

export interface CallDetail {
  call: CallRow;
  approval: ApprovalRow | null;
  artifacts: ArtifactRow[];
  events: AuditEvent[];
}

export interface ListCallsFilter {
  sessionId?: string;
  skill?: string;
  /** Only the most recent `limit` calls (still returned oldest first). */
  limit?: number;
}

/** What the audit log holds of a session: whether it is open, its grants, denials and aborts. */
export interface SessionRecord {
  sessionId: string;
  exists: boolean;
  /** Started and not ended. */
  open: boolean;
  /** A `session_aborted` event exists: refuse every later gated call. */
  aborted: boolean;
  /** Approval keys granted `approved_for_session`, sorted. */
  grants: string[];
  /** Denials per approval key, as the loop guard counts them (`countsAsDenial`). */
  denials: Record<string, number>;
  /** Keys with a `loop_guard_tripped` event, sorted. */
  loopGuarded: string[];
}

export type VerifyFailureReason =
  'malformed_row' | 'event_id_gap' | 'prev_hash_mismatch' | 'hash_mismatch' | 'not_canonical';

export type VerifyResult =
  | { ok: true; events: number; head: string | null }
  | { ok: false; events: number; badEventId: number; reason: VerifyFailureReason; detail: string };

export interface RecoveryReport {
  interruptedCalls: { callId: string; sessionId: string; stage: 'requested' | 'started' }[];
  deniedApprovals: { callId: string; sessionId: string; approvalKey: string }[];
  closedSessions: string[];
  /** Open sessions left alone because their owner process still runs (another server sharing the DB). */
  liveSessions: string[];
  /** Chain check after recovery; null when `verifyOnOpen` is false. */
  chain: VerifyResult | null;
}

export interface ProjectionSnapshot {
  sessions: Record<string, unknown>[];
  calls: Record<string, unknown>[];
  approvals: Record<string, unknown>[];
  artifacts: Record<string, unknown>[];
}

/** The pragmas in force, read back from SQLite after open. */
export interface AuditSettings {
  journalMode: string;
  synchronous: 'off' | 'normal' | 'full' | 'extra';
  foreignKeys: boolean;
  busyTimeoutMs: number;
  /** The connection's page cache in KiB (a writable connection keeps 512). */
  cacheKiB: number;
  schemaVersion: number;
}

export type SessionEndReason = SessionEndedPayload['reason'];
