import type { FinishStatus } from '../audit/call-payload-schemas.js';

/** A file a run produced, kept in the call's output folder. */
export interface RunArtifact {
  /** Path relative to the call's files folder. */
  path: string;
  /** Host path, for people. The server never reads through it. */
  abs: string;
  bytes: number;
  sha256: string;
  /** The bytes read when the run was collected (small files only): embedded as they were hashed. */
  content?: Buffer;
}

/** The outcome of a gated call, independent of MCP (the mcp layer turns it into a tool result). */
export interface CallResult {
  callId?: string;
  status: FinishStatus;
  isError: boolean;
  /** Text for the model. */
  text: string;
  /** The script's JSON result, when it produced one. */
  json?: unknown;
  artifacts: RunArtifact[];
  /** Set for runs that happened. */
  run?: {
    exitCode: number | null;
    durationMs: number;
    timedOut: boolean;
    cancelled: boolean;
    truncated: boolean;
  };
  /** SkillsError code behind a refusal or failure. */
  code?: string;
  /** False when the run happened but the audit log has not recorded its end yet (it is kept and retried). */
  recorded?: false;
}

/**
 * A run whose end the audit log refused: it happened, so the answer says what it did (its result and files, as
 * always) and that the record is still to be written. `isError` stays the run's own outcome: the call did run, and
 * an error would invite the model to run it again.
 */
export const notRecordedYet = (r: CallResult, why: Error): CallResult => ({
  ...r,
  recorded: false,
  text:
    `The script ran, but the audit log has not recorded how it ended (${why.message}). Its result and files ` +
    'below are not recorded yet: skills-mcp keeps the record and writes it as soon as the log takes writes ' +
    `again. Do not run the call again: it already ran.\n\n${r.text}`,
});

export const refused = (status: FinishStatus, text: string, code?: string, callId?: string): CallResult => ({
  status,
  isError: true,
  text,
  artifacts: [],
  ...(code === undefined ? {} : { code }),
  ...(callId === undefined ? {} : { callId }),
});
