import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import type { AuditStore } from '../audit/audit-store.js';
import type { ApprovalChannel } from '../audit/payload-schemas.js';
import type { AppendInput } from '../audit/types.js';
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
  type ApprovalView,
  type RefusalContext,
  type ScriptScan,
  type SessionState,
} from '../gate/index.js';
import type { Profile } from '../sandbox/profile-schema.js';
import { checkRelativePath } from '../skills/resolve-skill-path.js';
import type { Skill } from '../skills/types.js';
import { decisionEvents, finishedEvent, policyEvent, requestedEvent } from './call-events.js';
import { refused, type CallResult } from './call-result.js';
import { entryInputOf, type EntryInput } from './entry-input.js';
import type { ExecuteDeps } from './execute-call.js';
import { prepareCall, type CallRequest, type PreparedCall } from './prepare-call.js';
import { runApproved, type Unwritten } from './run-approved.js';
import type { Begin, CallContext, Recorded, Runner, RunnerDeps } from './runner-types.js';
import type { SessionInfo } from './session.js';

interface LiveSession {
  info: SessionInfo;
  gate: SessionState;
}

interface Pending {
  call: PreparedCall;
  session: LiveSession;
  timer: NodeJS.Timeout;
  /** Set when an approval was recorded out of band (console) and the call waits for the client's retry. */
  approved?: true;
  channel: CallContext['channel'];
}

const safeSummary = (input: unknown) => {
  try {
    return summarizeInput(input);
  } catch {
    return summarizeInput(null);
  }
};

/** The call pipeline of DESIGN §6. Every audit event is durable before the step it records. */
export function createRunner(deps: RunnerDeps): Runner {
  const { config, log } = deps;
  const sessions = new Map<string, Promise<LiveSession>>();
  const pending = new Map<string, Pending>();
  const outputs = new Map<string, { sessionId: string; filesDir: string }>();
  const scans = new Map<string, Promise<ScriptScan>>();
  const entries = new Map<string, EntryInput>();
  const profiles = new Map<string, Promise<Profile>>();
  /** Read-only call records still being written, per session: ending a session waits for them. */
  const readOnlyWrites = new Map<string, Set<Promise<void>>>();
  const closedListeners = new Set<(callId: string, result: CallResult | undefined) => void>();
  const notifyClosed = (callId: string, result: CallResult | undefined) => {
    for (const l of closedListeners) l(callId, result);
  };

  const entryInput = (skill: Skill): EntryInput => {
    const entry = skill.files.find((f) => f.path === skill.entryPoint);
    const key = `${skill.dir}\0${skill.entryPoint ?? ''}\0${entry?.size ?? ''}`;
    let e = entries.get(key);
    if (e === undefined) entries.set(key, (e = entryInputOf(skill)));
    return e;
  };

  /** The scan depends only on file contents: cached per bundle hash. */
  const scan = (skill: Skill, bundleSha256: string): Promise<ScriptScan> => {
    let s = scans.get(bundleSha256);
    if (s === undefined) scans.set(bundleSha256, (s = scanSkillScripts(skill)));
    return s;
  };

  const exec = async (): Promise<ExecuteDeps> => {
    const sandbox = await deps.sandbox();
    const profile = (name: string) => {
      let p = profiles.get(name);
      if (p === undefined) {
        profiles.set(name, (p = sandbox.loadProfile(name)));
        p.catch(() => profiles.delete(name));
      }
      return p;
    };
    return { config, sandbox, env: deps.env, runsDir: deps.runsDir, profile };
  };

  /** A session's audit record and gate state, started on its first call (gate state rebuilt from the log). */
  const session = (info: SessionInfo): Promise<LiveSession> => {
    let s = sessions.get(info.id);
    if (s === undefined) {
      s = deps.audit().then((audit) => {
        if (!audit.sessionState(info.id).exists) {
          const principal = info.principal === undefined ? {} : { principal_sha256: info.principal };
          audit.startSession(
            { transport: info.transport, server_version: deps.version, ...principal },
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

  /** Writes events in one transaction, then applies the gate events they record. */
  const commit = (
    audit: AuditStore,
    s: LiveSession,
    events: AppendInput[],
    apply: { type: string; payload: unknown }[] = [],
  ) => {
    audit.appendMany(events);
    for (const ev of apply) s.gate.apply(ev);
  };

  const refusalContext = (call: PreparedCall): RefusalContext => ({
    skill: call.skill.name,
    script: call.script,
    policy: call.policy.decision,
    rule: call.policy.rule,
    risk: call.risk.level,
    config: config.approval,
  });

  const run = async (
    audit: AuditStore,
    s: LiveSession,
    call: PreparedCall,
    callId: string,
    ctx: CallContext,
    before?: Unwritten,
  ) => {
    const { result, filesDir } = await runApproved(audit, s.info.id, call, callId, ctx, exec, before);
    if (filesDir !== undefined) outputs.set(callId, { sessionId: s.info.id, filesDir });
    return result;
  };

  const recordInvalid = (audit: AuditStore, s: LiveSession, req: CallRequest, e: SkillsError): string => {
    let script: string | undefined;
    try {
      script = req.script === undefined ? req.skill.entryPoint : checkRelativePath(req.script);
    } catch {
      script = undefined;
    }
    const callId = randomUUID();
    const payload = {
      tool: req.tool,
      skill: req.skill.name,
      ...(script === undefined ? {} : { script }),
      ...safeSummary(req.input),
      bundle_sha256: null,
      approval_key: null,
      valid: false,
      error_code: e.code,
    };
    audit.appendMany([
      { type: 'tool_call_requested', sessionId: s.info.id, callId, payload },
      finishedEvent(s.info.id, callId, 'invalid', { code: e.code }),
    ]);
    return callId;
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
      const text = `${e.message}${e.hint === undefined ? '' : `\nHint: ${e.hint}`}`;
      return { kind: 'done', result: refused('invalid', text, e.code, callId) };
    }
    const callId = randomUUID();
    const key = call.bound.approvalKey;
    const head = [requestedEvent(s.info.id, callId, call), policyEvent(s.info.id, callId, call)];
    const gate = resolveGate({
      policy: call.policy,
      session: s.gate,
      approvalKey: key,
      canAsk: ctx.canAsk,
      config: config.approval,
    });
    if (gate.action === 'run') {
      // Request, policy and decision go into tool_call_started's transaction (or the refusal's): nothing of the
      // skill happens before it.
      const d = decisionEvents(
        s.gate,
        s.info.id,
        callId,
        key,
        gate.outcome,
        gate.outcome.reason === 'cached' ? 'session' : 'rules',
      );
      const before = {
        events: [...head, ...d.events],
        written: () => d.apply.forEach((ev) => s.gate.apply(ev)),
      };
      return { kind: 'done', result: await run(audit, s, call, callId, ctx, before) };
    }
    if (gate.action === 'refuse') {
      const { reason } = gate.outcome;
      const channel: ApprovalChannel =
        reason === 'rules' ? 'rules' : reason === 'no_approver' ? 'none' : 'session';
      const d = decisionEvents(s.gate, s.info.id, callId, key, gate.outcome, channel);
      commit(
        audit,
        s,
        [...head, ...d.events, finishedEvent(s.info.id, callId, 'denied', { code: 'APPROVAL_DENIED' })],
        d.apply,
      );
      const text =
        reason === 'no_approver'
          ? noApproverMessage(refusalContext(call))
          : refusalMessage(reason, refusalContext(call));
      return {
        kind: 'done',
        result: refused('denied', text, reason === 'rules' ? 'POLICY_DENIED' : 'APPROVAL_DENIED', callId),
      };
    }
    commit(audit, s, [
      ...head,
      {
        type: 'approval_requested',
        sessionId: s.info.id,
        callId,
        payload: { approval_key: key, channel: ctx.channel },
      },
    ]);
    const timer = setTimeout(() => void expire(callId), config.approval.timeout_ms);
    timer.unref();
    pending.set(callId, { call, session: s, timer, channel: ctx.channel });
    const view = approvalView(call);
    return { kind: 'ask', callId, form: approvalRequest(view), view };
  };

  const approvalView = (call: PreparedCall): ApprovalView => {
    const workspace =
      call.skill.requests.workspace === 'write' && config.workspace !== undefined ? [config.workspace] : [];
    return {
      skill: call.skill.name,
      script: call.script,
      bundleSha256: call.bundle.sha256,
      runner: call.interpreter,
      argv: call.args,
      input: call.input,
      inputSummary: call.bound.input,
      sandbox: {
        profile: call.skill.requests.sandboxProfile ?? config.sandbox.profile,
        enforced: config.sandbox.mode !== 'off',
        network: call.network,
        writablePaths: [join(deps.runsDir, '<new folder for this call>'), ...workspace],
      },
      risk: call.risk,
      policy: call.policy,
    };
  };

  /** Applies an answer (or its absence) to a pending approval. Takes it out of `pending` first: never runs twice. */
  const decide = async (
    callId: string,
    outcome: ApprovalOutcome,
    channel: ApprovalChannel,
    ctx: CallContext,
  ): Promise<CallResult> => {
    const p = pending.get(callId);
    if (p === undefined) throw new SkillsError('APPROVAL_DENIED', 'this approval is no longer pending');
    pending.delete(callId);
    clearTimeout(p.timer);
    const audit = await deps.audit();
    const { session: s, call } = p;
    const d = decisionEvents(s.gate, s.info.id, callId, call.bound.approvalKey, outcome, channel);
    if (outcome.decision === 'approved' || outcome.decision === 'approved_for_session') {
      commit(audit, s, d.events, d.apply);
      return run(audit, s, call, callId, ctx);
    }
    commit(
      audit,
      s,
      [...d.events, finishedEvent(s.info.id, callId, 'denied', { code: 'APPROVAL_DENIED' })],
      d.apply,
    );
    return refused('denied', refusalMessage(outcome.reason, refusalContext(call)), 'APPROVAL_DENIED', callId);
  };

  const expire = async (callId: string) => {
    const p = pending.get(callId);
    if (p === undefined) return;
    try {
      if (!p.approved) {
        const { channel } = p;
        notifyClosed(
          callId,
          await decide(callId, { decision: 'denied', reason: 'timeout' }, channel, {
            canAsk: false,
            channel,
          }),
        );
        return;
      }
      // Approved in the console (recordAnswer) but the client never called again: finished, never run.
      pending.delete(callId);
      const audit = await deps.audit();
      audit.append(finishedEvent(p.session.info.id, callId, 'cancelled', { code: 'APPROVAL_UNCLAIMED' }));
      const text = `${p.call.skill.name}/${p.call.script} was approved, but the tool was not called again before the approval timed out; it was not run.`;
      notifyClosed(callId, refused('cancelled', text, 'APPROVAL_UNCLAIMED', callId));
    } catch (err) {
      log.error({ err, callId }, 'could not record an approval timeout');
    }
  };

  const resume = (
    callId: string,
    info: SessionInfo,
    answer: ApprovalAnswer,
    ctx: CallContext,
  ): Promise<CallResult> => {
    const p = pending.get(callId);
    if (p === undefined || p.session.info.id !== info.id) {
      const text =
        'This approval is no longer pending: it was already answered, it timed out, or the server restarted. ' +
        'Nothing was run by this request. Call the tool again to ask anew.';
      return Promise.resolve(refused('denied', text, 'APPROVAL_DENIED'));
    }
    if (p.approved) {
      // The decision is already durable (recordAnswer): run it now for the retrying client.
      pending.delete(callId);
      clearTimeout(p.timer);
      return deps.audit().then((audit) => run(audit, p.session, p.call, callId, ctx));
    }
    return decide(callId, interpretAnswer(answer), ctx.channel, ctx);
  };

  const recordAnswer = async (
    callId: string,
    info: SessionInfo,
    answer: ApprovalAnswer,
    channel: CallContext['channel'],
  ): Promise<Recorded> => {
    const p = pending.get(callId);
    if (p === undefined || p.session.info.id !== info.id || p.approved) {
      throw new SkillsError('APPROVAL_DENIED', 'this approval is no longer pending');
    }
    const outcome = interpretAnswer(answer);
    if (outcome.decision === 'approved' || outcome.decision === 'approved_for_session') {
      const d = decisionEvents(p.session.gate, info.id, callId, p.call.bound.approvalKey, outcome, channel);
      commit(await deps.audit(), p.session, d.events, d.apply);
      p.approved = true;
      return { kind: 'approved' };
    }
    return { kind: 'closed', result: await decide(callId, outcome, channel, { canAsk: false, channel }) };
  };

  const onPendingClosed = (listener: (callId: string, result: CallResult | undefined) => void) => {
    closedListeners.add(listener);
    return () => void closedListeners.delete(listener);
  };

  const recordReadOnly = (
    info: SessionInfo,
    tool: string,
    skill: string | null,
    input: unknown,
    ok: boolean,
  ) => {
    // Read-only calls run no code, so their record need not precede the answer: it is written right after,
    // keeping warm calls off the fsync path. The session is claimed and the write tracked now, so an endSession
    // that comes right after waits for it.
    const live = session(info);
    const callId = randomUUID();
    const payload = {
      tool,
      skill,
      ...safeSummary(input),
      bundle_sha256: null,
      approval_key: null,
      valid: true,
      read_only: true,
    };
    let writes = readOnlyWrites.get(info.id);
    if (writes === undefined) readOnlyWrites.set(info.id, (writes = new Set()));
    const write: Promise<void> = new Promise((r) => setImmediate(r))
      .then(() => Promise.all([deps.audit(), live]))
      .then(async ([audit]) => {
        // Group commit: both events, and those of concurrent read-only calls, share one transaction and one fsync.
        await Promise.all([
          audit.appendAsync({ type: 'tool_call_requested', sessionId: info.id, callId, payload }),
          audit.appendAsync(finishedEvent(info.id, callId, ok ? 'ok' : 'error')),
        ]);
      })
      .catch((err: unknown) => log.error({ err, tool }, 'could not audit a read-only call'))
      .finally(() => {
        writes.delete(write);
        if (writes.size === 0) readOnlyWrites.delete(info.id);
      });
    writes.add(write);
  };

  const artifactPath = (info: SessionInfo, callId: string, path: string): string | undefined => {
    const o = outputs.get(callId);
    return o === undefined || o.sessionId !== info.id ? undefined : join(o.filesDir, checkRelativePath(path));
  };

  const endSession = async (info: SessionInfo, reason: 'client_closed' | 'signal' | 'shutdown' | 'error') => {
    for (const [id, p] of pending) {
      if (p.session.info.id !== info.id) continue;
      clearTimeout(p.timer);
      pending.delete(id);
      notifyClosed(id, undefined);
    }
    const live = sessions.get(info.id);
    if (live === undefined) return;
    sessions.delete(info.id);
    await live.catch(() => undefined);
    // The session's read-only records land first (the first one may still be waiting for the store to open).
    const writes = readOnlyWrites.get(info.id);
    if (writes !== undefined) await Promise.all([...writes]);
    (await deps.audit()).endSession(info.id, reason);
  };

  const close = (): Promise<void> => {
    for (const [id, p] of pending) {
      clearTimeout(p.timer);
      notifyClosed(id, undefined);
    }
    pending.clear();
    return Promise.resolve();
  };

  return {
    entryInput,
    begin,
    resume,
    recordAnswer,
    onPendingClosed,
    recordReadOnly,
    artifactPath,
    endSession,
    close,
  };
}
