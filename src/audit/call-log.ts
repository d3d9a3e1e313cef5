import type { EventType } from './event-types.js';
import type { ReplicaLog } from './replica-log.js';
import type {
  AppendInput,
  AuditEvent,
  CallDetail,
  CallRow,
  ListCallsFilter,
  SessionEndReason,
  SessionStartInput,
  SessionRecord,
} from './types.js';

type Maybe<T> = T | Promise<T>;

/**
 * What the server needs of an audit log: the runner, its sessions, read-only records and the approval console. The
 * SQLite store answers at once (its methods are synchronous), the PostgreSQL one asynchronously; callers await
 * every method either way. As with the store, a write that resolves is durable, one that rejects (`AUDIT_FAILED`)
 * wrote nothing, and the step an event records must not be taken before it resolved. Per-call order (started twice,
 * anything after a terminal event, …) is checked inside the append transaction.
 */
export interface CallLog {
  /** Starts a session; sessions started in the same turn may share one commit. */
  startSessionAsync(
    input: SessionStartInput,
    options?: { sessionId?: string },
  ): Promise<AuditEvent<'session_started'>>;
  append<I extends AppendInput>(input: I): Maybe<AuditEvent<I['type']>>;
  /** All committed in one transaction, or none. */
  appendMany(inputs: readonly AppendInput[]): Maybe<AuditEvent[]>;
  /** `append`, possibly sharing a commit with others appended in the same turn. */
  appendAsync<I extends AppendInput>(input: I): Promise<AuditEvent<I['type']>>;
  /**
   * Optional: appends groups of events in one commit, each group all or nothing (a refused group fails alone, as in
   * `appendMany`). Resolves once durable with, per group, the error that refused it (undefined when written); the
   * events themselves are not sent back. For records nobody waits on (read-only calls), where one request for many
   * calls is cheaper than one per event.
   */
  appendGroups?(groups: readonly (readonly AppendInput[])[]): Promise<(Error | undefined)[]>;
  /** Pending approvals denied, open calls interrupted, then `session_ended`, in one transaction. Idempotent. */
  endSession(sessionId: string, reason: SessionEndReason): Maybe<AuditEvent<'session_ended'>>;
  /** Grants, denial counts, loop-guarded keys, aborted flag; rebuilt from events. */
  sessionState(sessionId: string): Maybe<SessionRecord>;
  sessionEvents<T extends EventType>(sessionId: string, types?: readonly T[]): Maybe<AuditEvent<T>[]>;
  listCalls(filter?: ListCallsFilter): Maybe<CallRow[]>;
  getCall(callId: string): Maybe<CallDetail | undefined>;
  /**
   * Only in a log shared by several server processes (PostgreSQL): what the replicas see of each other (see
   * {@link ReplicaLog}). Absent for a log one process owns.
   */
  replicas?: ReplicaLog;
  /** Why new runs are refused (the log cannot vouch for itself), or undefined. */
  runsRefused(): string | undefined;
}
