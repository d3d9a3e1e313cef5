import type { CallLog } from './call-log.js';
import type { EventType } from './event-types.js';
import type { ExportedEvent } from './parse-event-row.js';
import type { ChainPoint } from './verify-chain.js';
import type { WriterMark } from './writer-mark.js';
import type { Checkpoint } from './checkpoint.js';
import type { PruneCounts } from './prune-log.js';
import type { ProjectionDifference } from './compare-projections.js';
import type {
  AppendInput,
  AuditEvent,
  AuditSettings,
  CallDetail,
  CallRow,
  ListCallsFilter,
  ProjectionSnapshot,
  RecoveryReport,
  SessionEndReason,
  SessionStartInput,
  SessionRecord,
  VerifyResult,
} from './types.js';

/**
 * The audit log. Every write is synchronous and durable on return: a method that returns has committed its
 * events (WAL + `synchronous=FULL`: fsynced); a method that throws (`SkillsError` `AUDIT_FAILED`) wrote
 * nothing, and the caller must not go on with the step the event records. The write-ahead order (event
 * before side effect) is the caller's; the store refuses out-of-order events for a call (e.g. `started`
 * twice, anything after a terminal event, a terminal event while approval is pending).
 */
export interface AuditStore extends CallLog {
  readonly path: string;
  readonly readOnly: boolean;
  /** What recovery did at open; null when opened read-only or with `recover: false`. */
  readonly recovery: RecoveryReport | null;

  /** Starts a session (the store records its owner pid/host). The session id is `event.sessionId`. */
  startSession(input: SessionStartInput, options?: { sessionId?: string }): AuditEvent<'session_started'>;
  /** `startSession` through the group commit: sessions started in the same turn share one transaction and fsync. */
  startSessionAsync(
    input: SessionStartInput,
    options?: { sessionId?: string },
  ): Promise<AuditEvent<'session_started'>>;
  /** Appends one event in its own transaction. For `tool_call_requested` the call id is `event.callId`. */
  append<I extends AppendInput>(input: I): AuditEvent<I['type']>;
  /** Appends several events atomically (one transaction, one fsync): all are committed or none. */
  appendMany(inputs: readonly AppendInput[]): AuditEvent[];
  /**
   * Group commit: resolves once the event is durable, like `append`, but events appended in the same turn of
   * the event loop (by concurrent calls) share one transaction and one fsync. Each event is checked alone: a
   * refused one rejects without affecting the others. Await it before the side effect, as with `append`.
   */
  appendAsync<I extends AppendInput>(input: I): Promise<AuditEvent<I['type']>>;
  /**
   * Ends a session in one transaction: pending approvals denied (`session_ended`), open calls interrupted,
   * then `session_ended`. Idempotent: an ended session returns its existing `session_ended` event.
   */
  endSession(sessionId: string, reason: SessionEndReason): AuditEvent<'session_ended'>;
  /** Crash recovery (run by open): closes sessions whose owner process is gone, then verifies the chain. */
  recover(): RecoveryReport;

  /**
   * Checks the hash chain (all of it, or what follows an already verified point; at most `limit` events of it when
   * given); names the first bad row.
   */
  verify(from?: ChainPoint, limit?: number): VerifyResult;
  /**
   * Fails closed from now on: events that ask for an approval or start a process are refused (AUDIT_CHAIN_BROKEN),
   * the rest (read-only records, refusals, session ends) are still written. The first reason is kept.
   */
  refuseRuns(reason: string): void;
  /** Why runs are refused (a broken chain at open, or `refuseRuns`), or undefined. */
  runsRefused(): string | undefined;
  /**
   * The database's copy of the newest anchor written to the anchor file (its JSON line), or undefined. `audit
   * verify` checks that the file still holds it: lines cut from the file's end show even when the chain is intact.
   */
  lastAnchor(): string | undefined;
  /** Replaces that copy. Call it inside `withWriteLock`, before appending the same record to the file. */
  setLastAnchor(record: string): void;
  /**
   * Runs `fn` holding the database's write lock (one IMMEDIATE transaction): what `fn` writes commits with it, and
   * no other writer, in this process or another, runs meanwhile. A throw rolls back.
   */
  withWriteLock<T>(fn: () => T): T;
  /** The writer marks (`writer-mark.ts`): which events a holder of the anchor key appended. */
  writerMarks(): WriterMark[];
  /** The last event this store appended (and marked) that still holds, or undefined (none, or no key). */
  ownHead(): ChainPoint | undefined;
  /**
   * Runs `fn` in one read transaction: every read it makes on this store sees the same snapshot of the log, however
   * busy its writers (SQLite WAL: the snapshot is taken at the first read). Do not write inside it.
   */
  readSnapshot<T>(fn: () => T): T;
  /** How many events the log holds (rows, whether or not they verify), those archived and pruned included. */
  eventCount(): number;
  /**
   * The hash of one event, without parsing it. Of the events pruned, the newest checkpoint still names event 1's and
   * its last one's.
   */
  hashAt(eventId: number): string | undefined;
  /** The retention checkpoints (`checkpoint.ts`), oldest first: [] when nothing was ever pruned. */
  checkpoints(): Checkpoint[];
  /** The last event of the longest prefix of whole sessions that ended before `endedBefore` (`prune-log.ts`). */
  archivableThrough(endedBefore: number): number;
  /** Records the checkpoint and deletes what it covers. Call it inside `withWriteLock`. */
  prune(checkpoint: Checkpoint): PruneCounts;
  getEvent(eventId: number): AuditEvent | undefined;
  /** For the gate: grants, denial counts per key, loop-guarded keys, aborted flag; rebuilt from events. */
  sessionState(sessionId: string): SessionRecord;
  /** A session's events, optionally only some types, in commit order. */
  sessionEvents<T extends EventType>(sessionId: string, types?: readonly T[]): AuditEvent<T>[];
  listCalls(filter?: ListCallsFilter): CallRow[];
  getCall(callId: string): CallDetail | undefined;
  /** Call ids starting or ending with `fragment` (`shortCallId`): CLI `show` takes a unique start or end of an id. */
  findCallIds(fragment: string, limit?: number): string[];
  /** Every event from one read snapshot, in chain order, in the JSONL export shape. */
  exportEvents(): IterableIterator<ExportedEvent>;

  /** Clears and replays the projections from events (one transaction). Returns the number of events replayed. */
  rebuildProjections(): number;
  snapshotProjections(): ProjectionSnapshot;
  /** Rebuilds the summary tables from the events (in memory) and returns where the stored ones differ. */
  compareProjections(): ProjectionDifference[];
  /**
   * SQLite's own check of the file (`PRAGMA quick_check`): what it finds wrong, [] when nothing. An index that no
   * longer matches its table lets a lookup or listing show rows a scan does not, which neither the chain nor the
   * summary comparison would see.
   */
  checkFile(): string[];
  /** The pragmas in force, read back from SQLite. */
  settings(): AuditSettings;
  /** Closes the connection. Idempotent. */
  close(): void;
}
