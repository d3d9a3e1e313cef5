import type { CallerRecord } from './caller-record-schema.js';
import type { AuditEvent } from './types.js';

/** A call waiting for its approval in a shared log: what was asked, exactly as recorded when it was asked. */
export interface SharedPending {
  callId: string;
  /** The audit session the call's events belong to (the one that asked). */
  sessionId: string;
  /** `principal_sha256` of that session, when it had a principal. */
  principalSha256: string | undefined;
  tool: string;
  skill: string | null;
  script: string | null;
  approvalKey: string;
  inputSha256: string;
  /** `tool_call_requested.request_sha256`: all the call asked for; undefined in records of older versions. */
  requestSha256: string | undefined;
  bundleSha256: string | null;
  /** Who was asked (`approval_requested.channel`): the client's form, the approval console, the terminal. */
  channel: string;
  /** The signed-in caller `tool_call_requested` recorded, if any. */
  caller?: CallerRecord;
}

/**
 * A gate event read from a shared log. An `approval_decided` comes with what its call's `tool_call_requested`
 * recorded (the first one of that call id), so that a grant's MAC can be checked against it.
 */
export type GateEvent = AuditEvent & {
  requested?: { approvalKey: string; inputSha256: string; bundleSha256: string | null };
};

/** A console approval waiting on another server process: which call, and which process holds it. */
export interface WaitingView {
  callId: string;
  /** The audit session the call belongs to. */
  sessionId: string;
  /** The server process that holds the call (and runs it once approved). */
  host: string;
  pid: number;
}

/** A console approval waiting on another server process, with the card it shared. */
export interface SharedView extends WaitingView {
  /** The card it sealed, opened: authenticated, but still to be validated by the reader. */
  body: unknown;
}

/**
 * What the consoles of server processes sharing one log show each other: each shares the views of its own waiting
 * console approvals (sealed: the database never holds their values in the clear) and reads the others'. A view is
 * a small card (what the approval card shows) and, apart, the arguments and input in full.
 */
export interface PendingViewBoard {
  /**
   * Shares the view of a console approval waiting here until `ttlMs` from now (the database's clock). `principal`
   * names the caller it belongs to (the listing shares its slots fairly among callers).
   */
  share(v: {
    callId: string;
    sessionId: string;
    principal: string;
    ttlMs: number;
    card: unknown;
    input: unknown;
  }): Promise<void>;
  /**
   * The console approvals other processes shared that still wait (not expired, not decided or closed, session not
   * ended): at most `limit`, taken in turn from each caller (and within a caller from each session), those expiring
   * first first; and how many wait in all. Ids only: the cards are read with `cards`.
   */
  waiting(limit: number): Promise<{ listed: WaitingView[]; total: number }>;
  /** Which of these calls still wait as `waiting` means it, whether or not they would be listed. */
  stillWaiting(callIds: readonly string[]): Promise<Set<string>>;
  /** The cards of these calls, opened; a row whose card does not open under this process's key is left out. */
  cards(callIds: readonly string[]): Promise<SharedView[]>;
  /** The arguments and input of a call that still waits, opened; undefined when there are none to show. */
  input(callId: string): Promise<unknown>;
  /** Removes the view of a call (decided, closed, or its session ended). */
  drop(callId: string): Promise<void>;
}

/**
 * What a log shared by several server processes (replicas, PostgreSQL) offers besides the core {@link CallLog}: the
 * calls and gate events other processes recorded, their console approvals, and this process's lease.
 */
export interface ReplicaLog {
  /**
   * A call waiting for its approval in the log, whichever process asked it (asked, not decided, not ended), with
   * what binds it; else undefined.
   */
  pendingCall(callId: string): Promise<SharedPending | undefined>;
  /**
   * The gate events (`approval_decided`, `loop_guard_tripped`, `session_aborted`) after `afterEventId` of every
   * audit session continuing session `sessionId` (`<id>` or `<id>.<suffix>`, i.e. the same principal on every
   * replica, this one's included); of ended sessions only stops. In commit order.
   */
  gateEventsOf(sessionId: string, afterEventId: number): Promise<GateEvent[]>;
  /** The `approval_decided` events of these calls, in commit order. */
  decisionsOf(callIds: readonly string[]): Promise<AuditEvent<'approval_decided'>[]>;
  /** Only when the replicas share a secret (`http.state_key_file`): see {@link PendingViewBoard}. */
  pendingViews?: PendingViewBoard;
  /**
   * Whether this process's lease is fresh (renewed within the lease less a margin). A run is handed to the sandbox
   * only while it is: past the lease a peer may have recorded the call interrupted.
   */
  leaseFresh(): boolean;
  /**
   * Calls `listener` when this process finds its lease lost (its row removed by a peer, or no good renewal for a
   * whole lease), before it registers again. Returns the unsubscribe.
   */
  onLeaseLost(listener: () => void): () => void;
}
