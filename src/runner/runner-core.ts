import { dirname, join } from 'node:path';
import type { CallLog } from '../audit/call-log.js';
import type { AppendInput } from '../audit/types.js';
import type { Config } from '../config/config-schema.js';
import { createEnvResolver } from '../envs/create-env-resolver.js';
import { createSkillPins } from '../gate/index.js';
import type { Logger } from '../log.js';
import { createCallCaches, type CallCaches } from './call-caches.js';
import type { CallResult } from './call-result.js';
import { createDecisionSigner, type DecisionSigner } from './decision-signer.js';
import { createLateResults } from './late-results.js';
import { createLiveSessions, type LiveSession, type LiveSessions } from './live-sessions.js';
import { createPendingApprovals, type PendingApprovals } from './pending-approvals.js';
import { prepareCall, type PreparedCall } from './prepare-call.js';
import type { CallRequest } from './call-request.js';
import type { RecordedArtifact } from './read-artifact.js';
import { createReadOnlyRecords, type ReadOnlyRecords } from './read-only-records.js';
import { runApproved, type Unwritten } from './run-approved.js';
import { createRunSlots, machineMemoryShareMiB } from './run-slots.js';
import type { Replicas } from './replicas/replicas.js';
import type { CallContext, RunnerDeps } from './runner-types.js';

/** What every step of a call shares: the sessions, the approvals waiting, the caches, and how to write and run. */
export interface RunnerCore {
  deps: RunnerDeps;
  config: Config;
  log: Logger;
  now: () => number;
  signer: DecisionSigner;
  sessions: LiveSessions;
  pending: PendingApprovals;
  /** Refusals of approvals that timed out, kept for a late retry. */
  late: ReturnType<typeof createLateResults>;
  caches: CallCaches;
  readOnly: ReadOnlyRecords;
  /** What other server processes sharing the log did (nothing to do for a log this process owns). */
  replicas: () => Replicas;
  /** Writes events in one transaction, then applies the gate events they record to the session. */
  commit(audit: CallLog, s: LiveSession, events: AppendInput[], apply?: GateUpdate[]): Promise<void>;
  /** Runs an approved call (`before`: the events still to write in `tool_call_started`'s transaction). */
  run(
    audit: CallLog,
    s: LiveSession,
    call: PreparedCall,
    callId: string,
    ctx: CallContext,
    before?: Unwritten,
  ): Promise<CallResult>;
  /** Binds a request to the catalog as it is now (skills pinned on first sight). */
  prepare(req: CallRequest): Promise<PreparedCall>;
  /** A file collected from a call of this session, as recorded. */
  artifact(sessionId: string, callId: string, path: string): RecordedArtifact | undefined;
}

type GateUpdate = { type: string; payload: unknown };

export function createRunnerCore(deps: RunnerDeps, replicas: () => Replicas): RunnerCore {
  const { config, log } = deps;
  const sessions = createLiveSessions(deps);
  const pending = createPendingApprovals(
    {
      perSession: config.pending_approvals.per_session,
      perSessionBytes: config.pending_approvals.per_session_bytes,
      total: config.pending_approvals.total,
      totalBytes: config.pending_approvals.total_bytes,
    },
    (callId) => replicas().settle(callId),
  );
  const envs = createEnvResolver({
    config: config.dependencies,
    envsDir: deps.envsDir ?? join(dirname(deps.runsDir), 'envs'),
    env: deps.env,
    protect: [deps.runsDir, ...(deps.serverPaths ?? []), ...(deps.privatePaths ?? [])],
    log,
  });
  const slots = createRunSlots({
    memoryMiB: machineMemoryShareMiB(config.runs.memory_share),
    perSession: config.runs.max_per_session,
    waitMs: config.runs.wait_ms,
  });
  const caches = createCallCaches(deps, { envs, slots });
  const pins = deps.skillPins ?? createSkillPins();
  pins.observe(deps.catalog().skills);
  const outputs = new Map<string, { sessionId: string; files: Map<string, RecordedArtifact> }>();

  return {
    deps,
    config,
    log,
    now: deps.now ?? Date.now,
    signer: createDecisionSigner(deps.decisionKey),
    sessions,
    pending,
    late: createLateResults(config.pending_approvals.total),
    caches,
    readOnly: createReadOnlyRecords(deps, sessions),
    replicas,
    async commit(audit, s, events, apply = []) {
      const written = await audit.appendMany(events);
      replicas().wrote(audit, s, written);
      for (const ev of apply) s.gate.apply(ev);
    },
    async run(audit, s, call, callId, ctx, before) {
      const { result, folders } = await replicas().whileLeased(audit, ctx, (runCtx) =>
        runApproved(audit, s.auditId, call, callId, runCtx, caches.exec, before),
      );
      if (folders !== undefined) {
        const files = new Map(
          result.artifacts.map(({ path, sha256, bytes }) => [path, { path, sha256, bytes, folders }]),
        );
        outputs.set(callId, { sessionId: s.info.id, files });
      }
      return result;
    },
    prepare(req) {
      pins.observe(deps.catalog().skills);
      const { entryInput, scan, profile } = caches;
      return prepareCall(req, { config, pins, entryInput, scan, envs, profile });
    },
    artifact(sessionId, callId, path) {
      const o = outputs.get(callId);
      return o === undefined || o.sessionId !== sessionId ? undefined : o.files.get(path);
    },
  };
}
