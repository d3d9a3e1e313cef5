import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import type { AuditStore } from '../audit/audit-store.js';
import type { ApprovalChannel, FinishStatus } from '../audit/payload-schemas.js';
import { isSkillsError, SkillsError } from '../errors.js';
import {
  approvalRequest,
  createSessionState,
  interpretAnswer,
  noApproverMessage,
  refusalMessage,
  resolveGate,
  scanSkillScripts,
  summarizeInput,
  type ApprovalAnswer,
  type ApprovalOutcome,
  type RefusalContext,
  type ScriptScan,
  type SessionState,
} from '../gate/index.js';
import { checkRelativePath } from '../skills/resolve-skill-path.js';
import type { Skill } from '../skills/types.js';
import { refused, type CallResult } from './call-result.js';
import { entryInputOf, type EntryInput } from './entry-input.js';
import { prepareLaunch, runLaunch, type ExecuteDeps } from './execute-call.js';
import { prepareCall, type CallRequest, type PreparedCall } from './prepare-call.js';
import { describeRun } from './describe-run.js';
import type { Begin, CallContext, Runner, RunnerDeps } from './runner-types.js';
import type { SessionInfo } from './session.js';

interface LiveSession {
  info: SessionInfo;
  gate: SessionState;
}

interface Pending {
  call: PreparedCall;
  callId: string;
  session: LiveSession;
  timer: NodeJS.Timeout;
}

/** The call pipeline of DESIGN §6. Every audit event is durable before the step it records. */
export function createRunner(deps: RunnerDeps): Runner {
  const { config, log } = deps;
  const sessions = new Map<string, Promise<LiveSession>>();
  const pending = new Map<string, Pending>();
  const artifacts = new Map<string, { sessionId: string; filesDir: string }>();
  const scans = new Map<string, Promise<ScriptScan>>();
  const entries = new Map<string, EntryInput>();

  const entryInput = (skill: Skill): EntryInput => {
    const key = `${skill.dir}\0${skill.entryPoint ?? ''}\0${JSON.stringify(skill.files.find((f) => f.path === skill.entryPoint))}`;
    let e = entries.get(key);
    if (e === undefined) entries.set(key, (e = entryInputOf(skill)));
    return e;
  };

  const scan = (skill: Skill, bundleSha256: string): Promise<ScriptScan> => {
    let s = scans.get(bundleSha256);
    if (s === undefined) scans.set(bundleSha256, (s = scanSkillScripts(skill)));
    return s;
  };

  /** The audit session and gate state of a session, started on its first call (rebuilt from the log). */
  const session = (info: SessionInfo): Promise<LiveSession> => {
    let s = sessions.get(info.id);
    if (s === undefined) {
      s = deps.audit().then((audit) => {
        const state = audit.sessionState(info.id);
        if (!state.exists) {
          audit.startSession(
            {
              transport: info.transport,
              server_version: deps.version,
              ...(info.principal === undefined ? {} : { principal_sha256: info.principal }),
            },
            { sessionId: info.id },
          );
        }
        const past = audit.sessionEvents(info.id, [
          'approval_decided',
          'loop_guard_tripped',
          'session_aborted',
        ]);
        return { info, gate: createSessionState({ loopGuard: config.approval.loop_guard }, past) };
      });
      sessions.set(info.id, s);
      s.catch(() => sessions.delete(info.id));
    }
    return s;
  };

  const refusalContext = (call: PreparedCall): RefusalContext => ({
    skill: call.skill.name,
    script: call.script,
    policy: call.policy.decision,
    rule: call.policy.rule,
    risk: call.risk.level,
    config: config.approval,
  });

  const finish = (
    audit: AuditStore,
    sessionId: string,
    callId: string,
    status: FinishStatus,
    extra: { code?: string; exitCode?: number | null; durationMs?: number } = {},
  ) =>
    audit.append({
      type: 'tool_call_finished',
      sessionId,
      callId,
      payload: {
        status,
        exit_code: extra.exitCode ?? null,
        duration_ms: Math.round(extra.durationMs ?? 0),
        stdout_sha256: null,
        stdout_bytes: 0,
        stderr_bytes: 0,
        artifacts: [],
        ...(extra.code === undefined ? {} : { error_code: extra.code }),
      },
    });

  /** Records a decision (and the loop-guard / abort events it implies) before acting on it. */
  const recordDecision = (
    audit: AuditStore,
    s: LiveSession,
    callId: string,
    key: string,
    outcome: ApprovalOutcome,
    channel: ApprovalChannel,
  ) => {
    for (const ev of s.gate.eventsFor(key, outcome)) {
      if (ev.type === 'approval_decided') {
        audit.append({
          type: 'approval_decided',
          sessionId: s.info.id,
          callId,
          payload: { approval_key: key, decision: outcome.decision, reason: outcome.reason, channel },
        });
      } else if (ev.type === 'loop_guard_tripped') {
        audit.append({
          type: 'loop_guard_tripped',
          sessionId: s.info.id,
          callId,
          payload: { approval_key: key, denials: s.gate.denialCount(key) + 1 },
        });
      } else {
        audit.append({
          type: 'session_aborted',
          sessionId: s.info.id,
          callId,
          payload: { approval_key: key, channel },
        });
      }
      s.gate.apply(ev);
    }
  };

  const execute = async (
    audit: AuditStore,
    s: LiveSession,
    call: PreparedCall,
    callId: string,
    ctx: CallContext,
  ): Promise<CallResult> => {
    const started = (deps.now ?? Date.now)();
    const sandbox = await deps.sandbox();
    const exec: ExecuteDeps = { config, sandbox, env: deps.env, runsDir: deps.runsDir };
    let launch;
    try {
      launch = await prepareLaunch(call, exec);
    } catch (e) {
      const code = isSkillsError(e) ? e.code : 'INTERNAL';
      const status =
        code === 'STALE_BINDING' ? 'stale_binding' : code === 'SANDBOX_DENIED' ? 'sandbox_denied' : 'error';
      finish(audit, s.info.id, callId, status, { code, durationMs: Date.now() - started });
      if (status === 'error') throw e;
      const err = e as SkillsError;
      return refused(status, `${err.message}\nHint: ${err.hint ?? ''}`, code, callId);
    }
    audit.append({ type: 'tool_call_started', sessionId: s.info.id, callId, payload: launch.started });
    ctx.progress?.(0, `running ${call.script} in the ${launch.profile.name} sandbox`);
    let seenOutput = false;
    let finished;
    try {
      finished = await runLaunch(launch, exec, {
        ...(ctx.signal === undefined ? {} : { signal: ctx.signal }),
        onOutput: () => {
          if (!seenOutput) ctx.progress?.(1, 'output received');
          seenOutput = true;
        },
      });
    } catch (e) {
      const code = isSkillsError(e) ? e.code : 'INTERNAL';
      const status = code === 'SANDBOX_DENIED' ? 'sandbox_denied' : 'error';
      finish(audit, s.info.id, callId, status, { code, durationMs: Date.now() - started });
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
    audit.append({
      type: 'tool_call_finished',
      sessionId: s.info.id,
      callId,
      payload: {
        status,
        exit_code: result.exitCode,
        ...(result.signal === null ? {} : { signal: result.signal }),
        duration_ms: Math.round(result.durationMs),
        stdout_sha256: finished.stdoutSha256,
        stdout_bytes: result.bytes.stdout,
        stderr_bytes: result.bytes.stderr,
        truncated: result.truncated.stdout || result.truncated.stderr,
        artifacts: output.artifacts.map((a) => ({ path: a.path, sha256: a.sha256, bytes: a.bytes })),
      },
    });
    ctx.progress?.(2, `finished: ${status}`);
    artifacts.set(callId, { sessionId: s.info.id, filesDir: launch.filesDir });
    return describeRun(callId, status, finished, launch.profile.wallTimeMs);
  };

  const begin = async (req: CallRequest, ctx: CallContext): Promise<Begin> => {
    const audit = await deps.audit();
    const s = await session(req.session);
    let call: PreparedCall;
    try {
      call = await prepareCall(req, { config, entryInput, scan });
    } catch (e) {
      if (!isSkillsError(e)) throw e;
      const callId = recordInvalid(audit, s, req, e);
      return {
        kind: 'done',
        result: refused(
          'invalid',
          `${e.message}${e.hint === undefined ? '' : `\nHint: ${e.hint}`}`,
          e.code,
          callId,
        ),
      };
    }
    const { bound } = call;
    const requested = audit.append({
      type: 'tool_call_requested',
      sessionId: s.info.id,
      payload: {
        tool: req.tool,
        skill: call.skill.name,
        script: call.script,
        ...bound.input,
        bundle_sha256: call.bundle.sha256,
        approval_key: bound.approvalKey,
        valid: true,
      },
    });
    const callId = requested.callId;
    audit.append({
      type: 'policy_decided',
      sessionId: s.info.id,
      callId,
      payload: {
        decision: call.policy.decision,
        rule: call.policy.rule.slice(0, 256),
        risk: { level: call.risk.level, code: call.risk.code, reason: call.risk.reason.slice(0, 512) },
      },
    });
    const gate = resolveGate({
      policy: call.policy,
      session: s.gate,
      approvalKey: bound.approvalKey,
      canAsk: ctx.canAsk,
      config: config.approval,
    });
    if (gate.action === 'run') {
      const channel: ApprovalChannel = gate.outcome.reason === 'cached' ? 'session' : 'rules';
      recordDecision(audit, s, callId, bound.approvalKey, gate.outcome, channel);
      return { kind: 'done', result: await execute(audit, s, call, callId, ctx) };
    }
    if (gate.action === 'refuse') {
      const { reason } = gate.outcome;
      const channel: ApprovalChannel =
        reason === 'rules' ? 'rules' : reason === 'no_approver' ? 'none' : 'session';
      recordDecision(audit, s, callId, bound.approvalKey, gate.outcome, channel);
      finish(audit, s.info.id, callId, 'denied', { code: 'APPROVAL_DENIED' });
      const text =
        reason === 'no_approver'
          ? noApproverMessage(refusalContext(call))
          : refusalMessage(reason, refusalContext(call));
      return {
        kind: 'done',
        result: refused('denied', text, reason === 'rules' ? 'POLICY_DENIED' : 'APPROVAL_DENIED', callId),
      };
    }
    audit.append({
      type: 'approval_requested',
      sessionId: s.info.id,
      callId,
      payload: { approval_key: bound.approvalKey, channel: ctx.channel },
    });
    const timer = setTimeout(() => void expire(callId), config.approval.timeout_ms);
    timer.unref();
    pending.set(callId, { call, callId, session: s, timer });
    const sandboxMode = config.sandbox.mode;
    const form = approvalRequest({
      skill: call.skill.name,
      script: call.script,
      bundleSha256: call.bundle.sha256,
      runner: call.interpreter,
      argv: call.args,
      input: call.input,
      inputSummary: bound.input,
      sandbox: {
        profile: call.skill.requests.sandboxProfile ?? config.sandbox.profile,
        enforced: sandboxMode !== 'off',
        network: call.network,
        writablePaths: [
          join(deps.runsDir, '<new folder per call>'),
          ...(call.skill.requests.workspace === 'write' && config.workspace !== undefined
            ? [config.workspace]
            : []),
        ],
      },
      risk: call.risk,
      policy: call.policy,
    });
    return { kind: 'ask', callId, form };
  };

  /** A person's answer (or its absence) for a pending approval; takes it out of `pending` first. */
  const decide = async (
    callId: string,
    outcome: ApprovalOutcome,
    channel: ApprovalChannel,
    ctx?: CallContext,
  ): Promise<CallResult> => {
    const p = pending.get(callId);
    if (p === undefined) throw new SkillsError('APPROVAL_DENIED', 'this approval is no longer pending');
    pending.delete(callId);
    clearTimeout(p.timer);
    const audit = await deps.audit();
    recordDecision(audit, p.session, callId, p.call.bound.approvalKey, outcome, channel);
    if (outcome.decision === 'approved' || outcome.decision === 'approved_for_session') {
      return execute(audit, p.session, p.call, callId, ctx ?? { canAsk: false, channel: 'elicitation' });
    }
    finish(audit, p.session.info.id, callId, 'denied', { code: 'APPROVAL_DENIED' });
    return refused(
      'denied',
      refusalMessage(outcome.reason, refusalContext(p.call)),
      'APPROVAL_DENIED',
      callId,
    );
  };

  const expire = async (callId: string) => {
    try {
      if (pending.has(callId)) await decide(callId, { decision: 'denied', reason: 'timeout' }, 'elicitation');
    } catch (err) {
      log.error({ err, callId }, 'could not record an approval timeout');
    }
  };

  const resume = async (
    callId: string,
    info: SessionInfo,
    answer: ApprovalAnswer,
    ctx: CallContext,
  ): Promise<CallResult> => {
    const p = pending.get(callId);
    if (p === undefined || p.session.info.id !== info.id) {
      return refused(
        'denied',
        'This approval is no longer pending: it was already answered, it timed out, or the server restarted. Nothing was run by this request. Call the tool again to ask anew.',
        'APPROVAL_DENIED',
      );
    }
    return decide(callId, interpretAnswer(answer), ctx.channel, ctx);
  };

  const recordInvalid = (audit: AuditStore, s: LiveSession, req: CallRequest, e: SkillsError): string => {
    let summary;
    try {
      summary = summarizeInput(req.input);
    } catch {
      summary = summarizeInput(null);
    }
    let script: string | undefined;
    try {
      script = req.script === undefined ? req.skill.entryPoint : checkRelativePath(req.script);
    } catch {
      script = undefined;
    }
    const requested = audit.append({
      type: 'tool_call_requested',
      sessionId: s.info.id,
      payload: {
        tool: req.tool,
        skill: req.skill.name,
        ...(script === undefined ? {} : { script }),
        ...summary,
        bundle_sha256: null,
        approval_key: null,
        valid: false,
        error_code: e.code,
      },
    });
    finish(audit, s.info.id, requested.callId, 'invalid', { code: e.code });
    return requested.callId;
  };

  const recordReadOnly = (
    info: SessionInfo,
    tool: string,
    skill: string | null,
    input: unknown,
    ok: boolean,
  ) => {
    // Read-only calls run no code, so their record need not precede the answer: it is written right after,
    // atomically (request + finish in one transaction), keeping warm calls off the fsync path.
    setImmediate(() => {
      void (async () => {
        const audit = await deps.audit();
        await session(info);
        const callId = randomUUID();
        let summary;
        try {
          summary = summarizeInput(input);
        } catch {
          summary = summarizeInput(null);
        }
        audit.appendMany([
          {
            type: 'tool_call_requested',
            sessionId: info.id,
            callId,
            payload: {
              tool,
              skill,
              ...summary,
              bundle_sha256: null,
              approval_key: null,
              valid: true,
              read_only: true,
            },
          },
          {
            type: 'tool_call_finished',
            sessionId: info.id,
            callId,
            payload: {
              status: ok ? 'ok' : 'error',
              exit_code: null,
              duration_ms: 0,
              stdout_sha256: null,
              stdout_bytes: 0,
              stderr_bytes: 0,
              artifacts: [],
            },
          },
        ]);
      })().catch((err: unknown) => log.error({ err, tool }, 'could not audit a read-only call'));
    });
  };

  const artifactPath = (info: SessionInfo, callId: string, path: string): string | undefined => {
    const a = artifacts.get(callId);
    if (a === undefined || a.sessionId !== info.id) return undefined;
    return join(a.filesDir, checkRelativePath(path));
  };

  const endSession = async (info: SessionInfo, reason: 'client_closed' | 'signal' | 'shutdown' | 'error') => {
    for (const [id, p] of pending) {
      if (p.session.info.id !== info.id) continue;
      clearTimeout(p.timer);
      pending.delete(id);
    }
    if (!sessions.has(info.id)) return;
    sessions.delete(info.id);
    const audit = await deps.audit();
    audit.endSession(info.id, reason);
  };

  const close = (): Promise<void> => {
    for (const p of pending.values()) clearTimeout(p.timer);
    pending.clear();
    return Promise.resolve();
  };

  return { entryInput, begin, resume, recordReadOnly, artifactPath, endSession, close };
}
