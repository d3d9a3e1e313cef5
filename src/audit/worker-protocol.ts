import { SkillsError, isSkillsError, type ErrorCode } from '../errors.js';
import type { EventType } from './event-types.js';
import type { SqliteDriverChoice } from './sqlite/sqlite-db.js';
import type { AppendInput, ListCallsFilter, SessionEndReason, SessionStartInput } from './types.js';

/** What the audit worker is started with (cloned into the thread). */
export interface WorkerSettings {
  /** The SQLite file. */
  path: string;
  /** Where the signed chain heads go; see `startAnchoring`. */
  anchors: { file: string; keyFile: string; intervalMs: number; log: boolean };
  /** The server's log level: the worker's logger drops what the server's would. */
  logLevel: string;
  /** The SQLite binding (`audit_sqlite_driver`; default auto). */
  sqliteDriver?: SqliteDriverChoice;
}

/** One request to the worker. Requests are served in the order they were sent. */
export type WorkerRequest =
  | { m: 'startSession'; input: SessionStartInput; sessionId: string | undefined }
  | { m: 'append'; input: AppendInput }
  | { m: 'appendMany'; inputs: readonly AppendInput[] }
  /** Answered with one `WireError` or null per group. */
  | { m: 'appendGroups'; groups: readonly (readonly AppendInput[])[] }
  | { m: 'endSession'; sessionId: string; reason: SessionEndReason }
  | { m: 'sessionState'; sessionId: string }
  | { m: 'sessionEvents'; sessionId: string; types: readonly EventType[] | undefined }
  | { m: 'listCalls'; filter: ListCallsFilter | undefined }
  | { m: 'getCall'; callId: string }
  | { m: 'close' };

/** A request with the id its reply carries. */
export type WorkerOp = WorkerRequest & { id: number };

/** An error as it crosses the thread boundary: a `SkillsError` keeps its code, message, hint and details. */
export interface WireError {
  code: ErrorCode | undefined;
  message: string;
  hint: string | undefined;
  details: Record<string, unknown> | undefined;
}

export type WorkerReply = { id: number } & ({ ok: true; value: unknown } | { ok: false; error: WireError });

/** What the worker sends to the server's thread. */
export type WorkerMessage =
  /** The log is open (recovered, verified, anchored); `refused` as in `runsRefused()`. */
  | { kind: 'ready'; refused: string | undefined }
  /** Opening failed: nothing will be served. */
  | { kind: 'failed'; error: WireError }
  /** Answers to requests, in the order they were served. */
  | { kind: 'done'; replies: WorkerReply[] }
  /** New runs are refused from now on (see `AuditStore.refuseRuns`). */
  | { kind: 'refused'; reason: string }
  /** One line of the worker's log (pino JSON), for the server's logger. */
  | { kind: 'log'; line: string };

export const encodeError = (e: unknown): WireError =>
  isSkillsError(e)
    ? { code: e.code, message: e.message, hint: e.hint, details: e.details }
    : {
        code: undefined,
        message: e instanceof Error ? e.message : String(e),
        hint: undefined,
        details: undefined,
      };

/** The error on this side: a `SkillsError` again when it was one, else a plain `Error` (a bug, logged as such). */
export const decodeError = (w: WireError): Error =>
  w.code === undefined
    ? new Error(w.message)
    : new SkillsError(w.code, w.message, {
        ...(w.hint === undefined ? {} : { hint: w.hint }),
        ...(w.details === undefined ? {} : { details: w.details }),
      });
