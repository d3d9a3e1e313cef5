import type { CallLog } from '../audit/call-log.js';
import { isRecordablePath, type FinishStatus } from '../audit/call-payload-schemas.js';
import type { AppendInput } from '../audit/types.js';
import { isStoppedRefusal } from '../audit/is-stopped-refusal.js';
import { isSkillsError, SkillsError } from '../errors.js';
import { sha256Hex } from '../gate/index.js';
import { SESSION_STOPPED_MESSAGE } from '../approvals/refusal-message.js';
import { finishedEvent } from './call-events.js';
import { notRecordedYet, refused, type CallResult } from './call-result.js';
import { describeRun } from './describe-run.js';
import { missingPackageVersion } from './missing-package-version.js';
import { prepareLaunch, runLaunch, type ExecuteDeps, type Launch } from './execute-call.js';
import type { OutputFolders } from './collect-output.js';
import type { PreparedCall } from './prepare-call.js';
import type { WorkspaceChanges } from '../sandbox/types.js';
import type { CallContext } from './runner-types.js';

/** Events of a call not yet written: they share the transaction of the next event `runApproved` records. */
export interface Unwritten {
  events: AppendInput[];
  /** Runs once they are durable (applies the gate events they record). */
  written: () => void;
}

const NOTHING: Unwritten = { events: [], written: () => undefined };

/**
 * Stages 5–8 for an approved call: re-check the binding and the sandbox, record `tool_call_started` (durable before
 * the spawn), run, collect, record `tool_call_finished` (durable before the answer). Returns the outcome and where
 * its files are. `before` (request, policy and decision of a call allowed without asking) is written in the same
 * transaction as `tool_call_started` or the refusal: one fsync fewer, and preparing the launch (hashing, the per-call
 * folder) is not a side effect a record must precede.
 */
export async function runApproved(
  audit: CallLog,
  sessionId: string,
  call: PreparedCall,
  callId: string,
  ctx: CallContext,
  execDeps: () => Promise<ExecuteDeps>,
  before: Unwritten = NOTHING,
): Promise<{ result: CallResult; folders?: OutputFolders }> {
  const started = Date.now();
  const write = async (ev: AppendInput) => {
    await audit.appendMany([...before.events, ev]);
    before.written();
  };
  // The start was refused after a stop: what `before` decided is written without its approval, and the call ends.
  const endStopped = async () => {
    const unrun = before.events.filter((ev) => ev.type !== 'approval_decided');
    const end = finishedEvent(sessionId, callId, 'denied', {
      code: 'APPROVAL_DENIED',
      durationMs: Date.now() - started,
    });
    await audit.appendMany([...unrun, end]);
    return refused('denied', SESSION_STOPPED_MESSAGE, 'APPROVAL_DENIED', callId);
  };
  let launch;
  let exec;
  try {
    exec = await execDeps();
    launch = await prepareLaunch(call, exec);
  } catch (e) {
    const code = isSkillsError(e) ? e.code : 'INTERNAL';
    const status: FinishStatus =
      code === 'STALE_BINDING' ? 'stale_binding' : code === 'SANDBOX_DENIED' ? 'sandbox_denied' : 'error';
    const expected = status !== 'error' || code.startsWith('ENV_');
    await write(finishedEvent(sessionId, callId, status, { code, durationMs: Date.now() - started }));
    if (!expected) throw e;
    const err = e as SkillsError;
    return { result: refused(status, `${err.message}\nHint: ${err.hint ?? ''}`, code, callId) };
  }
  let release: () => void = () => undefined;
  try {
    release = (await exec.slots?.acquire(sessionId, launch.plan.limits.memoryMiB, ctx.signal)) ?? release;
  } catch (e) {
    launch.release();
    if (!isSkillsError(e)) throw e;
    await write(
      finishedEvent(sessionId, callId, 'error', { code: e.code, durationMs: Date.now() - started }),
    );
    return { result: refused('error', `${e.message}\nHint: ${e.hint ?? ''}`, e.code, callId) };
  }
  try {
    return await startAndRun(audit, sessionId, call, callId, ctx, launch, exec, write, started, endStopped);
  } finally {
    release();
    // The run is over: its bundle copy may be pruned from now on.
    launch.release();
  }
}

/** Stages 6–8 once the run has its slot: `tool_call_started`, the sandboxed process, `tool_call_finished`. */
async function startAndRun(
  audit: CallLog,
  sessionId: string,
  call: PreparedCall,
  callId: string,
  ctx: CallContext,
  launch: Launch,
  exec: ExecuteDeps,
  write: (ev: AppendInput) => Promise<void>,
  started: number,
  endStopped: () => Promise<CallResult>,
): Promise<{ result: CallResult; folders?: OutputFolders }> {
  if (audit.replicas?.leaseFresh() === false)
    return { result: await endLeaseLost(sessionId, callId, write, started) };
  const recorded = write({ type: 'tool_call_started', sessionId, callId, payload: launch.started });
  let installed: string[] | undefined;
  let durable: Promise<void> = recorded;
  if (launch.install !== undefined && exec.envs !== undefined) {
    try {
      await recorded;
    } catch (e) {
      if (!isStoppedRefusal(e)) throw e;
      // Stopped on another replica since this call was let through: it ends unrun, as a stopped session's calls do.
      return { result: await endStopped() };
    }
    // The approval covered install + run; `tool_call_started` (durable) records that this call installs.
    void ctx.progress?.(0, `installing the skill environment (${launch.install.id.slice(0, 12)})`);
    try {
      installed = (await exec.envs.install(launch.install, call.skill, exec.sandbox)).installed;
    } catch (e) {
      if (!isSkillsError(e)) throw e;
      await audit.append(
        finishedEvent(sessionId, callId, 'error', { code: e.code, durationMs: Date.now() - started }),
      );
      return { result: refused('error', `${e.message}\nHint: ${e.hint ?? ''}`, e.code, callId) };
    }
    durable = Promise.resolve();
  }
  // The sandbox gets the run ready (launcher, limits, arguments) while `tool_call_started` is written, and hands it
  // over only once that record is durable and, right before, the lease is still fresh (a process stalled since
  // the record may have been swept by a peer meanwhile).
  const handOff = durable.then(() => {
    if (audit.replicas?.leaseFresh() === false)
      throw new SkillsError('AUDIT_LEASE_LOST', 'the audit lease is not fresh');
    void ctx.progress?.(0, `running ${call.script} in the ${launch.profile.name} sandbox`);
  });
  // Whatever the sandbox does first, this promise's failure is handled below.
  handOff.catch(() => undefined);
  // The record leaves for the audit writer at the end of this turn of the event loop (requests of one turn share a
  // commit): the sandbox's preparation, mostly synchronous, starts after it so the two overlap.
  await new Promise((resolve) => setImmediate(resolve));
  let seenOutput = false;
  let finished;
  try {
    finished = await runLaunch(launch, exec, {
      ...(ctx.signal === undefined ? {} : { signal: ctx.signal }),
      ready: handOff,
      onOutput: () => {
        if (!seenOutput) void ctx.progress?.(1, 'output received');
        seenOutput = true;
      },
    });
  } catch (e) {
    // Never handed over: nothing ran, and the call ends as it would have before the hand-off.
    const notHandedOff = await handOff.then(
      () => undefined,
      (err: unknown) => ({ err }),
    );
    if (notHandedOff !== undefined) {
      const { err } = notHandedOff;
      if (isSkillsError(err) && err.code === 'AUDIT_LEASE_LOST')
        return { result: await endLeaseLost(sessionId, callId, async (ev) => audit.append(ev), started) };
      if (isStoppedRefusal(err)) return { result: await endStopped() };
      throw err;
    }
    const code = isSkillsError(e) ? e.code : 'INTERNAL';
    await audit.append(
      finishedEvent(sessionId, callId, code === 'SANDBOX_DENIED' ? 'sandbox_denied' : 'error', {
        code,
        durationMs: Date.now() - started,
      }),
    );
    throw e;
  }
  const { result, output } = finished;
  const status: FinishStatus = result.cancelled
    ? 'cancelled'
    : result.timedOut
      ? 'timeout'
      : result.exitCode === 0
        ? 'ok'
        : 'error';
  const payload = {
    status,
    exit_code: result.exitCode,
    ...(result.signal === null ? {} : { signal: result.signal }),
    duration_ms: Math.round(result.durationMs),
    stdout_sha256: finished.stdoutSha256,
    stdout_bytes: result.bytes.stdout,
    stderr_bytes: result.bytes.stderr,
    truncated: result.truncated.stdout || result.truncated.stderr,
    artifacts: output.artifacts.map((a) => ({ path: a.path, sha256: a.sha256, bytes: a.bytes })),
    ...(output.refusedNames.length === 0
      ? {}
      : { artifacts_refused: output.refusedNames.map((h) => ({ path_sha256: h })) }),
    ...(installed === undefined ? {} : { env_installed: installed }),
    ...(result.workspace === undefined ? {} : { workspace_changes: workspaceRecord(result.workspace) }),
    ...(finished.sessionFull === undefined ? {} : { error_code: 'SESSION_FOLDER_FULL' }),
  };
  const unrecorded = await recordFinish(audit, exec, [
    { type: 'tool_call_finished', sessionId, callId, payload },
    // Never let what a script named its files turn its outcome into `interrupted`: the exit code and digests
    // are recorded without the artifact list, with a code that says why.
    {
      type: 'tool_call_finished',
      sessionId,
      callId,
      payload: { ...payload, artifacts: [], artifacts_refused: [], error_code: 'ARTIFACTS_UNRECORDABLE' },
    },
  ]);
  if (ctx.progress !== undefined) {
    // The last notification is written before the result, as the spec asks. The pause is best effort for the SDK
    // client (2.4), which dispatches a notification a microtask after a response read in the same chunk and then
    // reports it as an unknown token (modelcontextprotocol/typescript-sdk#2580): no server can rule that out.
    await ctx.progress(2, `finished: ${status}`);
    await new Promise((r) => setTimeout(r, 5));
  }
  const lackingVersion =
    status === 'error'
      ? await missingPackageVersion(result.stderr.toString('utf8'), launch.plan, call.skill, exec.envs)
      : undefined;
  const described = describeRun(
    callId,
    status,
    finished,
    launch.plan.limits.wallTimeMs,
    call.skill.name,
    {
      network: launch.plan.network,
      ...(launch.plan.workspace === undefined ? {} : { workspace: launch.plan.workspace }),
      ...(launch.plan.env.SKILL_DIR === undefined ? {} : { skillDir: launch.plan.env.SKILL_DIR }),
      skill: call.skill.name,
      operator: call.grants.operator,
    },
    lackingVersion,
  );
  return {
    result: unrecorded === undefined ? described : notRecordedYet(described, unrecorded),
    folders: launch.folders,
  };
}

/**
 * Writes `tool_call_finished` (the first of `tries` the log takes). When the log takes none (its storage failed:
 * disk full, writer stopped), the run still happened: the record is kept to be written later, and the refusal is
 * returned for the answer to say so.
 */
async function recordFinish(
  audit: CallLog,
  exec: ExecuteDeps,
  tries: AppendInput[],
): Promise<SkillsError | undefined> {
  let refusal: SkillsError | undefined;
  for (const ev of tries) {
    try {
      await audit.append(ev);
      return undefined;
    } catch (e) {
      if (!isSkillsError(e) || e.code !== 'AUDIT_FAILED') throw e;
      refusal = e;
    }
  }
  if (exec.unrecorded !== undefined) exec.unrecorded.keep(tries);
  else exec.log?.error({ err: refusal, event: tries[0] }, 'the end of a run was never recorded');
  return refusal;
}

/**
 * This process's lease in the shared log is not fresh: nothing is handed to the sandbox. The call is recorded
 * finished with AUDIT_LEASE_LOST if the log still takes it (a peer may already have recorded it interrupted).
 */
async function endLeaseLost(
  sessionId: string,
  callId: string,
  write: (ev: AppendInput) => Promise<unknown>,
  started: number,
): Promise<CallResult> {
  const end = finishedEvent(sessionId, callId, 'error', {
    code: 'AUDIT_LEASE_LOST',
    durationMs: Date.now() - started,
  });
  await write(end).catch(() => undefined);
  return refused(
    'error',
    'skills-mcp did not run this call: this server lost touch with the shared audit log (its lease is not fresh), ' +
      'so another server may already have closed the call. Nothing was run.\nHint: call the tool again.',
    'AUDIT_LEASE_LOST',
    callId,
  );
}

const recordedPath = (p: string) => (isRecordablePath(p) ? { path: p } : { path_sha256: sha256Hex(p) });

/** The workspace changes a run made, as the audit log holds them: paths (or their digests) and content digests. */
function workspaceRecord(ws: WorkspaceChanges) {
  return {
    written: [...ws.digests].map(([p, d]) => ({ ...recordedPath(p), sha256: d.sha256, bytes: d.bytes })),
    deleted: ws.deleted.map(recordedPath),
    refused: ws.refused.length,
    ...(ws.applied ? {} : { applied: false }),
  };
}
