import { isSkillsError } from '../errors.js';
import { answerCall } from './answer-call.js';
import { approvalView } from './approval-view.js';
import { beginCall } from './begin-call.js';
import { createDecisions } from './decide-call.js';
import { createReplicas } from './replicas/create-replicas.js';
import type { Replicas } from './replicas/replicas.js';
import { createRunnerCore } from './runner-core.js';
import type { PreparedSession, Runner, RunnerDeps } from './runner-types.js';
import { prepareRuns } from './prepare-runs.js';
import type { SessionInfo } from './session.js';
import { removeSessionFolder } from './session-folder.js';
import { warmFirstCalls } from './warm-first-calls.js';

/**
 * The gated call pipeline (see docs/architecture.md): every audit event is durable before the step it records.
 * A call begins (`begin-call`), may wait for an answer (`answer-call`), is decided (`decide-call`) and runs
 * (`run-approved`); what other server processes sharing the log do is `replicas/`.
 */
export function createRunner(deps: RunnerDeps): Runner {
  const { log } = deps;
  const core = createRunnerCore(deps, () => replicas);
  const decisions = createDecisions(core);
  const replicas: Replicas = createReplicas(core, decisions);
  const begin = beginCall(core, (callId) => void decisions.expire(callId));
  const { resume, abandon, recordAnswer } = answerCall(core, decisions);
  const { pending, sessions } = core;

  const endSession: Runner['endSession'] = async (info, reason) => {
    pending.closeAll(info.id);
    replicas.forget(info.id);
    const live = sessions.forget(info.id);
    if (live === undefined) return;
    const s = await live.catch(() => undefined);
    // The session's read-only records land first (the first one may still be waiting for the store to open).
    await core.readOnly.settled(info.id);
    if (s !== undefined) {
      await core.caches.unrecorded.flush(s.auditId); // ends of runs the log refused: else they would read `interrupted`
      await (await deps.audit()).endSession(s.auditId, reason);
    }
    await removeSessionFolder(deps.runsDir, info, log);
  };

  /**
   * When the log refused an event because this process's session was ended elsewhere (a peer took this server for
   * dead while its lease had lapsed), the session is forgotten so that the next call continues in a new audit
   * session; this call still fails, with the log's reason.
   */
  const forgetIfEnded = async <T>(info: SessionInfo, step: () => Promise<T>): Promise<T> => {
    try {
      return await step();
    } catch (e) {
      if (isSkillsError(e) && e.code === 'AUDIT_FAILED' && /the session has ended/.test(e.message)) {
        log.warn(
          { session: info.id },
          'the audit log holds this session as ended: the next call starts a new one',
        );
        pending.closeAll(info.id);
        replicas.forget(info.id);
        void sessions.forget(info.id)?.catch(() => undefined);
      }
      throw e;
    }
  };

  let prepared: Promise<void> | undefined;
  const prepare = () =>
    (prepared ??= prepareRuns(deps)
      .then(() => warmFirstCalls(deps, core.caches))
      .then((skills) => log.info({ skills }, 'first calls prepared')));
  /** The session's first record, ahead of its first call (a session that ended meanwhile is left alone). */
  const startSession = async ({ info, open }: PreparedSession) => {
    await deps.audit();
    if (open()) await sessions.get(info);
  };
  return {
    entryInput: core.caches.entryInput,
    prepareRuns: async (session) => {
      const started = session === undefined ? undefined : startSession(session).catch(() => undefined);
      await Promise.all([prepare(), started]);
    },
    begin: (req, ctx) => forgetIfEnded(req.session, () => begin(req, ctx)),
    pendingView: (callId) => {
      const p = pending.get(callId);
      return p === undefined ? undefined : approvalView(p.call, deps.config, deps.runsDir, callId);
    },
    resume: (callId, info, answer, ctx, retry) =>
      forgetIfEnded(info, () => resume(callId, info, answer, ctx, retry)),
    abandon: (callId, info) => forgetIfEnded(info, () => abandon(callId, info)),
    recordAnswer,
    onPendingClosed: pending.onClosed,
    recordSharedAnswer: replicas.recordSharedAnswer,
    onDecidedElsewhere: replicas.onDecidedElsewhere,
    recordReadOnly: core.readOnly.record,
    artifact: (info, callId, path) => core.artifact(info.id, callId, path),
    endSession,
    close: () => {
      pending.closeAll();
      core.late.clear();
      replicas.close();
      return core.caches.unrecorded.close();
    },
  };
}
