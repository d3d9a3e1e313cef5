import type { CallLog } from '../audit/call-log.js';
import type { Config } from '../config/config-schema.js';
import type { SkillPins } from '../gate/index.js';
import type { ApprovalDecision } from '../approvals/approval-decision.js';
import type { ApprovalView } from '../approvals/approval-view.js';
import type { ApprovalAnswer, ApprovalForm } from '../approvals/approval-request.js';
import type { Logger } from '../log.js';
import type { Sandbox } from '../sandbox/create-sandbox.js';
import type { Catalog } from '../skills/catalog.js';
import type { Skill } from '../skills/types.js';
import type { CallResult } from './call-result.js';
import type { EntryInput } from './entry-input.js';
import type { RecordedArtifact } from './read-artifact.js';
import type { CallRequest } from './call-request.js';
import type { SessionInfo } from './session.js';

export interface RunnerDeps {
  catalog: () => Catalog;
  /**
   * The folder each skill name first stood for, observed from the first catalog the server served (and every
   * reload); default: from the catalog when the runner is made.
   */
  skillPins?: SkillPins;
  config: Config;
  log: Logger;
  version: string;
  /** Opened on first need: start-up never waits for the database (SQLite or PostgreSQL). */
  audit: () => Promise<CallLog>;
  /** Created on first need. */
  sandbox: () => Promise<Sandbox>;
  /** The server's environment (only profile-allowed names reach a script). */
  env: NodeJS.ProcessEnv;
  /** Folder for per-call output folders. */
  runsDir: string;
  /** Folder of built skill environments (`<id>/`); default: `envs` beside `runsDir`. */
  envsDir?: string;
  /** Host paths the server reads (audit log, profiles folder): a run never changes them through the workspace. */
  serverPaths?: string[];
  /** Host paths no run ever sees in a workspace copy (the approval console's link files: whoever reads one can approve). */
  privatePaths?: string[];
  /** Folder of the read-only, content-addressed copies of approved skill bundles (what runs). */
  bundlesDir: string;
  /** With a shared log: how often to look for decisions recorded elsewhere while console approvals wait here. */
  decisionPollMs?: number;
  /**
   * With a log shared by replicas and their shared secret (`decisionMacKey`): signs every decision recorded here, and
   * a decision or grant recorded elsewhere is acted on only when its MAC verifies. Without it, console approvals are
   * not shared and no grant recorded by another process applies.
   */
  decisionKey?: Uint8Array;
  now?: () => number;
}

/** How the caller can reach a person, per request. */
export interface CallContext {
  /** True when an approval can be asked now (client declared elicitation, not --no-elicitation). */
  canAsk: boolean;
  /**
   * True when the client can show the approval form but its answer does not count: HTTP without a token (see
   * `clientFormCounts`). A refusal for want of an approver then says how to get one.
   */
  formNotTrusted?: boolean;
  /**
   * True when the approval console runs and a passkey is enrolled: a call that needs a passkey is asked there
   * (without it such a call is refused, `passkey_required`).
   */
  passkeyConsole?: boolean;
  /** Who is asked: MCP elicitation, the approval console, or the terminal (`skills-mcp run`). */
  channel: 'elicitation' | 'console' | 'terminal';
  /**
   * Set for a console approval the client is pointed at by a URL-mode elicitation (the approval's secret-free
   * link): recorded in `approval_requested`. The client's answer to it never approves.
   */
  urlElicitation?: true;
  signal?: AbortSignal;
  /** The client's declared name and version (`clientInfo`), when it gave one: named when it answers unseen. */
  client?: string;
  /** Progress for the client (waiting for approval, start, output received, end). */
  progress?: (progress: number, message: string) => Promise<void>;
}

export type Begin =
  | { kind: 'done'; result: CallResult }
  /** `view` is the same content as `form.message`, as data (the approval console renders it). */
  | { kind: 'ask'; callId: string; form: ApprovalForm; view: ApprovalView }
  /** The call needs a passkey: ask again with the approval console as the channel (nothing was recorded). */
  | { kind: 'console' };

/** What `recordAnswer` did: closed the call (a refusal, with its result), or kept an approval for `resume`. */
export type Recorded = { kind: 'closed'; result: CallResult } | { kind: 'approved' };

/** What a person was shown of a call waiting on another server process: the decision holds only for that. */
export interface SeenCall {
  sessionId: string;
  approvalKey: string;
  inputSha256: string;
  bundleSha256: string;
}

/**
 * What `recordSharedAnswer` did: recorded an approval (the process holding the call runs it), recorded a refusal
 * (`stopped`: the session had been stopped, so an approval was recorded as a refusal), found the call no longer
 * waiting, or found that what the person was shown is not what was recorded (nothing written).
 */
export type SharedRecorded =
  { kind: 'approved' } | { kind: 'denied' } | { kind: 'stopped' } | { kind: 'gone' } | { kind: 'mismatch' };

/** A console approval waiting here was decided by another server process: approved (kept) or refused (`result`). */
export type DecidedElsewhere = (
  callId: string,
  d: { decision: ApprovalDecision; result?: CallResult },
) => void;

/** A connected session whose audit record may be started ahead of its first call (`Runner.prepareRuns`). */
export interface PreparedSession {
  info: SessionInfo;
  /** Still connected: a session that ended meanwhile is not started. */
  open: () => boolean;
}

export interface Runner {
  /** The input schema of an executable skill's tool (frontmatter → argparse → free-form). */
  entryInput(skill: Skill): EntryInput;
  /**
   * Gets the first run ready ahead of it (audit log, sandbox probe, interpreters: see `prepare-runs.ts`; the first
   * executable skills' caches and copies: `warm-first-calls.ts`), so the first call of a session costs what the
   * others do. With `session`, also starts that session's audit record, unless `open()` says the client is gone by
   * then. Started once the server serves; idempotent; never rejects.
   */
  prepareRuns(session?: PreparedSession): Promise<void>;
  /** Stages 1–4: records the request and policy, then runs, refuses, or asks for approval. */
  begin(req: CallRequest, ctx: CallContext): Promise<Begin>;
  /**
   * Continues a call that asked for approval, with the person's answer. Never runs a call twice. With `retry` (the
   * request that carries the continuation), a request that differs from the pending call in tool, skill, script,
   * arguments or input is refused (`RETRY_MISMATCH`) and nothing runs.
   */
  resume(
    callId: string,
    session: SessionInfo,
    answer: ApprovalAnswer,
    ctx: CallContext,
    retry?: CallRequest,
  ): Promise<CallResult>;
  /**
   * The client cancelled the tool call (its request) while the approval waited: the call is decided at once as
   * `request_cancelled` and finished `cancelled`, nothing runs. An approval already recorded (console) is kept.
   */
  abandon(callId: string, session: SessionInfo): Promise<CallResult>;
  /**
   * Approval console: records a person's answer for a pending approval whose tool call is not waiting
   * now (it answered "retry once the user has decided"). A refusal closes the call at once (`closed`); an
   * approval is durable at once and the call stays pending until `resume` from the same session runs it
   * (the answer given to that `resume` is ignored), or until `timeout_ms` passes (finished, never run).
   */
  recordAnswer(
    callId: string,
    session: SessionInfo,
    answer: ApprovalAnswer,
    channel: CallContext['channel'],
  ): Promise<Recorded>;
  /**
   * Calls `listener` when a pending approval ends without a `resume`/`recordAnswer`: its timeout (with the
   * result the call got), the end of its session or `close` (no result). Returns the unsubscribe function.
   */
  onPendingClosed(listener: (callId: string, result: CallResult | undefined) => void): () => void;
  /**
   * Approval console, for a call waiting on another server process that shares the log (its console shared it):
   * records the person's answer, once, if the call is still waiting and `seen` is what was recorded when it was
   * asked. Nothing runs here: the process holding the call learns of the decision and runs it or refuses it.
   */
  recordSharedAnswer(callId: string, seen: SeenCall, answer: ApprovalAnswer): Promise<SharedRecorded>;
  /**
   * Calls `listener` when a console approval waiting here was decided in the console of another server process
   * (with a shared log). Returns the unsubscribe function.
   */
  onDecidedElsewhere(listener: DecidedElsewhere): () => void;
  /** What the person is asked about a call still waiting for a decision (its input in full), else undefined. */
  pendingView(callId: string): ApprovalView | undefined;
  /** Audits a read-only tool call (no approval, no process). */
  /** Records a read-only call; a promise when the answer must wait for the record (see `ReadOnlyRecords`). */
  recordReadOnly(
    session: SessionInfo,
    tool: string,
    skill: string | null,
    input: unknown,
    ok: boolean,
  ): Promise<void> | undefined;
  /** A file collected from a call made in this session (exactly as recorded), or undefined. */
  artifact(session: SessionInfo, callId: string, path: string): RecordedArtifact | undefined;
  endSession(session: SessionInfo, reason: 'client_closed' | 'signal' | 'shutdown' | 'error'): Promise<void>;
  close(): Promise<void>;
}
