/** String codes for every expected failure. Add a code here before using it. */
export type ErrorCode =
  | 'CONFIG_INVALID'
  | 'USAGE'
  | 'SKILL_NOT_FOUND'
  | 'SKILL_INVALID'
  | 'SKILL_TOO_LARGE'
  /** The skill's SKILL.md no longer holds the text that was validated (edited or removed since it was loaded). */
  | 'SKILL_CHANGED'
  | 'FILE_NOT_FOUND'
  | 'PATH_OUTSIDE_SKILL'
  | 'PATH_INVALID'
  | 'FILE_TOO_LARGE'
  | 'SCRIPT_NOT_FOUND'
  | 'RUNNER_UNSUPPORTED'
  | 'INPUT_INVALID'
  | 'INPUT_TOO_LARGE'
  | 'SANDBOX_DENIED'
  | 'SANDBOX_PROFILE_INVALID'
  | 'SANDBOX_FAILED'
  | 'APPROVAL_DENIED'
  /** The approval console is waiting for the person: call the tool again once they decided. */
  | 'APPROVAL_PENDING'
  /** Approved in the console, but the tool was not called again before the approval timed out. */
  | 'APPROVAL_UNCLAIMED'
  | 'POLICY_DENIED'
  /** The caller's access token lacks the scope this call needs (e.g. skills:run for a call that runs a script). */
  | 'SCOPE_MISSING'
  | 'STALE_BINDING'
  /** Too many sandboxed runs at once (server memory budget or per-session cap): nothing ran. */
  | 'RUNS_BUSY'
  /** A run left the session's working folder over its size or entry cap: the folder was emptied. */
  | 'SESSION_FOLDER_FULL'
  /** Too many approvals waiting for an answer (count or input bytes): nothing was asked. */
  | 'APPROVALS_BUSY'
  | 'AUDIT_FAILED'
  /** This server's lease in a shared audit log is not fresh (database out of reach, or the process stalled): not run. */
  | 'AUDIT_LEASE_LOST'
  | 'AUDIT_CHAIN_BROKEN'
  | 'KEY_INVALID'
  /** A skill's dependency declaration cannot be installed as written. */
  | 'ENV_SPEC_INVALID'
  /** The skill's environment is not built and installs are off (`dependencies.install: never`). */
  | 'ENV_MISSING'
  /** Building a skill's environment failed (nothing was kept). */
  | 'ENV_INSTALL_FAILED'
  /** A pinned git source could not be fetched, or its checkout is not the pinned commit as it was fetched. */
  | 'SOURCE_INVALID'
  | 'INTERNAL';

export interface SkillsErrorOptions {
  /** What the user or model can do about it. */
  hint?: string;
  cause?: unknown;
  /** Extra structured detail, safe to show (no secrets, no host paths the client need not see). */
  details?: Record<string, unknown>;
}

/** The one error type for expected failures. */
export class SkillsError extends Error {
  override readonly name = 'SkillsError';
  readonly code: ErrorCode;
  readonly hint: string | undefined;
  readonly details: Record<string, unknown> | undefined;

  constructor(code: ErrorCode, message: string, options: SkillsErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    this.hint = options.hint;
    this.details = options.details;
  }
}

export const isSkillsError = (e: unknown): e is SkillsError => e instanceof SkillsError;
