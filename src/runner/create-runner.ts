import { dirname, join } from 'node:path';
import { createEnvResolver } from '../envs/create-env-resolver.js';
import { newCallId } from '../audit/call-id.js';
import type { CallLog } from '../audit/call-log.js';
import type { ApprovalChannel } from '../audit/payload-schemas.js';
import type { AppendInput } from '../audit/types.js';
import { isSkillsError, SkillsError } from '../errors.js';
import {
  approvalMessage,
  approvalSchema,
  cardDisplay,
  createSkillPins,
  displayCall,
  interpretAnswer,
  isDecisionReason,
  noApproverMessage,
  refusalMessage,
  resolveGate,
  shownRecord,
  type ApprovalAnswer,
  type ApprovalOutcome,
  type RefusalContext,
  type UnseenAnswer,
} from '../gate/index.js';
import { approvalView } from './approval-view.js';
import { createCallCaches } from './call-caches.js';
import { decisionEvents, finishedEvent, policyEvent, requestedEvent } from './call-events.js';
import { refused, type CallResult } from './call-result.js';
import { createLiveSessions, type LiveSession } from './live-sessions.js';
import { createLateResults } from './late-results.js';
import { createPendingApprovals, type Pending } from './pending-approvals.js';
import { prepareCall, type CallRequest, type PreparedCall } from './prepare-call.js';
import { prepareRuns } from './prepare-runs.js';
import { createReadOnlyRecords } from './read-only-records.js';
import { recordInvalid } from './record-invalid.js';
import type { RecordedArtifact } from './read-artifact.js';
import { runApproved, type Unwritten } from './run-approved.js';
import { createRunSlots, machineMemoryShareMiB } from './run-slots.js';
import { isSameRequest } from './same-request.js';
import { principalDigest } from '../audit/principal-digest.js';
import { isStoppedRefusal } from '../audit/is-stopped-refusal.js';
import type { Begin, CallContext, Recorded, Runner, RunnerDeps } from './runner-types.js';
import { isDecidedElsewhere, recordSharedAnswer } from './record-shared-answer.js';
import { createSharedConsoleApprovals } from './shared-console-approvals.js';
import { createDecisionSigner } from './decision-signer.js';
import type { SessionInfo } from './session.js';
import { removeSessionFolder } from './session-folder.js';
import { unseenAnswer } from './unseen-answer.js';

type AbortedOutcome = ApprovalOutcome & { decision: 'denied'; reason: 'session_aborted' };

/** The gated call pipeline (see docs/architecture.md): every audit event is durable before the step it records. */
export function createRunner(deps: RunnerDeps): Runner {
  const { config, log } = deps;
  const now = deps.now ?? Date.now;
  const signer = createDecisionSigner(deps.decisionKey);
  const sessions = createLiveSessions(deps);
  const pending = createPendingApprovals(
    {
      perSession: config.pending_approvals.per_session,
      perSessionBytes: config.pending_approvals.per_session_bytes,
      total: config.pending_approvals.total,
      totalBytes: config.pending_approvals.total_bytes,
    },
    (callId) => shared.settle(callId),
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
  const readOnly = createReadOnlyRecords(deps, sessions);
  const pins = deps.skillPins ?? createSkillPins();
  pins.observe(deps.catalog().skills);
  const late = createLateResults(config.pending_approvals.total);
  const outputs = new Map<string, { sessionId: string; files: Map<string, RecordedArtifact> }>();

  /** Per session: the last gate event of other replicas applied, and the events this process applied itself. */
  const synced = new Map<string, { after: number; own: Set<number> }>();
  const syncOf = (s: LiveSession) => {
    let st = synced.get(s.info.id);
    if (st === undefined) synced.set(s.info.id, (st = { after: 0, own: new Set() }));
    return st;
  };

  /** Writes events in one transaction, then applies the gate events they record. */
  const commit = async (
    audit: CallLog,
    s: LiveSession,
    events: AppendInput[],
    apply: { type: string; payload: unknown }[] = [],
  ) => {
    const written = await audit.appendMany(events);
    // Applied here now: the sync reads them back (from this session, or the one another replica asked a call in).
    if (audit.gateEventsOf !== undefined) for (const ev of written) syncOf(s).own.add(ev.eventId);
    for (const ev of apply) s.gate.apply(ev);
  };

  /**
   * With a log shared by replicas: applies to this session's gate what the same session (principal) recorded on
   * other replicas since the last look: grants, denials, loop guard, "deny and stop" — also those another replica
   * wrote into this process's own audit session (deciding a call asked here). A grant applies only when its MAC
   * verifies (signed by a process holding the replicas' shared secret); without the secret none does.
   */
  const syncGate = async (audit: CallLog, s: LiveSession) => {
    if (audit.gateEventsOf === undefined) return;
    const st = syncOf(s);
    for (const ev of await audit.gateEventsOf(s.info.id, st.after)) {
      st.after = Math.max(st.after, ev.eventId);
      if (st.own.delete(ev.eventId)) continue;
      // A grant lets later calls run without asking: only one a process holding the shared secret signed.
      if (signer.mayApply(ev)) s.gate.apply(ev);
      else
        log.warn(
          { callId: ev.callId, eventId: ev.eventId },
          'ignored a session grant whose MAC does not verify',
        );
    }
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
    audit: CallLog,
    s: LiveSession,
    call: PreparedCall,
    callId: string,
    ctx: CallContext,
    before?: Unwritten,
  ) => {
    // A lost lease (shared log) stops the run: a peer may have recorded the call interrupted already.
    const lost = new AbortController();
    const unsubscribe = audit.onLeaseLost?.(() => lost.abort());
    const signal =
      unsubscribe === undefined
        ? ctx.signal
        : ctx.signal === undefined
          ? lost.signal
          : AbortSignal.any([ctx.signal, lost.signal]);
    let ran;
    try {
      const runCtx = signal === undefined ? ctx : { ...ctx, signal };
      ran = await runApproved(audit, s.auditId, call, callId, runCtx, caches.exec, before);
    } finally {
      unsubscribe?.();
    }
    const { result, folders } = ran;
    if (folders !== undefined) {
      const files = new Map(
        result.artifacts.map(({ path, sha256, bytes }) => [path, { path, sha256, bytes, folders }]),
      );
      outputs.set(callId, { sessionId: s.info.id, files });
    }
    return result;
  };

  /** Binds a request to the catalog as it is now (skills pinned on first sight). */
  const prepare = (req: CallRequest): Promise<PreparedCall> => {
    pins.observe(deps.catalog().skills);
    const { entryInput, scan, profile } = caches;
    return prepareCall(req, { config, pins, entryInput, scan, envs, profile });
  };

  const begin = async (req: CallRequest, ctx: CallContext): Promise<Begin> => {
    const audit = await deps.audit();
    const s = await sessions.get(req.session);
    await syncGate(audit, s);
    let call: PreparedCall;
    try {
      call = await prepare(req);
    } catch (e) {
      if (!isSkillsError(e)) throw e;
      const callId = await recordInvalid(audit, s.auditId, req, e, s.caller);
      const text = `${e.message}${e.hint === undefined ? '' : `\nHint: ${e.hint}`}`;
      return { kind: 'done', result: refused('invalid', text, e.code, callId) };
    }
    const callId = newCallId();
    const key = call.bound.approvalKey;
    const head = [requestedEvent(s.auditId, callId, call, s.caller), policyEvent(s.auditId, callId, call)];
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
        s.auditId,
        callId,
        key,
        gate.outcome,
        gate.outcome.reason === 'cached' ? 'session' : 'rules',
        { mac: signer.macFor(s.auditId, callId, call, gate.outcome.decision) },
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
      const d = decisionEvents(s.gate, s.auditId, callId, key, gate.outcome, channel, {
        mac: signer.macFor(s.auditId, callId, call, gate.outcome.decision),
      });
      await commit(
        audit,
        s,
        [...head, ...d.events, finishedEvent(s.auditId, callId, 'denied', { code: 'APPROVAL_DENIED' })],
        d.apply,
      );
      const text =
        reason === 'no_approver'
          ? noApproverMessage({ ...refusalContext(call), formNotTrusted: ctx.formNotTrusted === true })
          : refusalMessage(reason, refusalContext(call));
      return {
        kind: 'done',
        result: refused('denied', text, reason === 'rules' ? 'POLICY_DENIED' : 'APPROVAL_DENIED', callId),
      };
    }
    const full = pending.reserve(callId, s.info.id, call.bound.input.input_bytes);
    if (full !== undefined) {
      await commit(audit, s, [
        ...head,
        finishedEvent(s.auditId, callId, 'denied', { code: 'APPROVALS_BUSY' }),
      ]);
      const text = `skills-mcp did not ask about ${call.skill.name}/${call.script}: ${full}. Nothing was run.`;
      return { kind: 'done', result: refused('denied', text, 'APPROVALS_BUSY', callId) };
    }
    // What the person is shown, decided before it is recorded: the log keeps its risk, findings and text digest.
    const view = approvalView(call, config, deps.runsDir, callId);
    const form = { message: approvalMessage(view, displayCall(view)), requestedSchema: approvalSchema() };
    const shown =
      ctx.channel === 'console'
        ? shownRecord(cardDisplay(view))
        : shownRecord(displayCall(view), form.message);
    try {
      await commit(audit, s, [
        ...head,
        {
          type: 'approval_requested',
          sessionId: s.auditId,
          callId,
          payload: { approval_key: key, channel: ctx.channel, shown },
        },
      ]);
    } catch (e) {
      pending.release(callId);
      throw e;
    }
    const timer = setTimeout(() => void expire(callId), config.approval.timeout_ms);
    timer.unref();
    pending.add(callId, { call, session: s, timer, askedAt: now(), channel: ctx.channel });
    if (ctx.channel === 'console') shared.share(audit, s, callId, key, view);
    return { kind: 'ask', callId, form, view };
  };

  /** A log shared by replicas refused this process's decision for a console approval: another console decided it. */
  const lostToConsole = (audit: CallLog, p: Pending, e: unknown) =>
    p.channel === 'console' && audit.decisionsOf !== undefined && isDecidedElsewhere(e);

  /** Applies an answer (or its absence) to a pending approval. Takes it out of `pending` first: never runs twice. */
  const decide = async (
    callId: string,
    outcome: ApprovalOutcome,
    channel: ApprovalChannel,
    ctx: CallContext,
    held = false,
    unseen?: UnseenAnswer,
  ): Promise<CallResult> => {
    const p = pending.take(callId);
    if (p === undefined) throw new SkillsError('APPROVAL_DENIED', 'this approval is no longer pending');
    const audit = await deps.audit();
    const { session: s, call } = p;
    await syncGate(audit, s).catch((err: unknown) =>
      log.warn({ err }, 'could not read other replicas’ stops'),
    );
    // A stop in this session wins over any later approval of a call asked before it.
    const o: ApprovalOutcome = s.gate.isAborted()
      ? { decision: 'denied', reason: 'session_aborted' }
      : outcome;
    const d = decisionEvents(s.gate, s.auditId, callId, call.bound.approvalKey, o, channel, {
      caller: s.caller,
      mac: signer.macFor(s.auditId, callId, call, o.decision),
    });
    if (o.decision === 'approved' || o.decision === 'approved_for_session') {
      try {
        await commit(audit, s, d.events, d.apply);
      } catch (e) {
        // With a shared log, a retry on another replica (or its console) may have decided it first.
        if (lostToConsole(audit, p, e)) return shared.lostClaim(p, callId, ctx, held);
        if (isDecidedElsewhere(e)) return notPending();
        if (isStoppedRefusal(e)) return stoppedMeanwhile(audit, s, s.auditId, callId, call);
        throw e;
      }
      return run(audit, s, call, callId, ctx);
    }
    // A call the client cancelled while it waited ends cancelled: nobody refused it.
    const [status, code] =
      o.reason === 'request_cancelled'
        ? (['cancelled', 'REQUEST_CANCELLED'] as const)
        : (['denied', 'APPROVAL_DENIED'] as const);
    try {
      await commit(audit, s, [...d.events, finishedEvent(s.auditId, callId, status, { code })], d.apply);
    } catch (e) {
      if (lostToConsole(audit, p, e)) return shared.lostClaim(p, callId, ctx, held);
      throw e;
    }
    if (o.decision === 'abort') await stopSession(audit, s);
    const text = refusalMessage(o.reason, {
      ...refusalContext(call),
      ...(unseen === undefined ? {} : { unseen }),
    });
    return refused(status, text, code, callId);
  };

  /**
   * The log refused an approval because the session was stopped on another replica between this one's look at the
   * stops and its decision (the check under the chain lock): the call is denied as stopped, nothing is run.
   */
  const stoppedMeanwhile = async (
    audit: CallLog,
    s: LiveSession,
    auditId: string,
    callId: string,
    call: PreparedCall,
  ): Promise<CallResult> => {
    const stopped: AbortedOutcome = { decision: 'denied', reason: 'session_aborted' };
    const d = decisionEvents(s.gate, auditId, callId, call.bound.approvalKey, stopped, 'session', {
      caller: s.caller,
      mac: signer.macFor(auditId, callId, call, stopped.decision),
    });
    await audit.appendMany([
      ...d.events,
      finishedEvent(auditId, callId, 'denied', { code: 'APPROVAL_DENIED' }),
    ]);
    await syncGate(audit, s).catch((err: unknown) =>
      log.warn({ err }, 'could not read other replicas’ stops'),
    );
    return refused(
      'denied',
      refusalMessage('session_aborted', refusalContext(call)),
      'APPROVAL_DENIED',
      callId,
    );
  };

  /**
   * "Deny and stop": every other approval of the session still waiting, or approved but not yet claimed by a
   * retry, is closed unrun; the session refuses every later call.
   */
  const stopSession = async (audit: CallLog, s: LiveSession) => {
    const stopped: AbortedOutcome = { decision: 'denied', reason: 'session_aborted' };
    for (const [id, p] of pending.ofSession(s.info.id)) {
      pending.take(id);
      const events = p.approved
        ? []
        : decisionEvents(s.gate, s.auditId, id, p.call.bound.approvalKey, stopped, 'session', {
            mac: signer.macFor(s.auditId, id, p.call, stopped.decision),
          }).events;
      await audit.appendMany([
        ...events,
        finishedEvent(s.auditId, id, 'denied', { code: 'APPROVAL_DENIED' }),
      ]);
      const text = refusalMessage('session_aborted', refusalContext(p.call));
      pending.notifyClosed(id, refused('denied', text, 'APPROVAL_DENIED', id));
    }
  };

  const shared = createSharedConsoleApprovals({
    audit: deps.audit,
    signer,
    config,
    log,
    now: deps.now ?? Date.now,
    pollMs: deps.decisionPollMs ?? 300,
    pending: () => pending,
    syncGate: (audit, s) => syncGate(audit, s),
    stopSession: (audit, s) => stopSession(audit, s),
    run: (audit, s, call, callId, ctx) => run(audit, s, call, callId, ctx),
    // A session closed elsewhere (lease expired) also denies its approvals: not a person's refusal.
    refusal: (p, callId, reason) =>
      isDecisionReason(reason)
        ? refused('denied', refusalMessage(reason, refusalContext(p.call)), 'APPROVAL_DENIED', callId)
        : notPending(),
  });

  const expire = async (callId: string) => {
    const p = pending.get(callId);
    if (p === undefined) return;
    try {
      if (!p.approved) {
        const { channel } = p;
        const result = await decide(callId, { decision: 'denied', reason: 'timeout' }, channel, {
          canAsk: false,
          channel,
        });
        late.keep(callId, p.session.info.id, result);
        pending.notifyClosed(callId, result);
        return;
      }
      // Approved in the console (recordAnswer) but the client never called again: finished, never run.
      pending.take(callId);
      const audit = await deps.audit();
      await audit.append(
        finishedEvent(p.session.auditId, callId, 'cancelled', { code: 'APPROVAL_UNCLAIMED' }),
      );
      const text = `${p.call.skill.name}/${p.call.script} was approved, but the tool was not called again before the approval timed out; it was not run.`;
      pending.notifyClosed(callId, refused('cancelled', text, 'APPROVAL_UNCLAIMED', callId));
    } catch (err) {
      log.error({ err, callId }, 'could not record an approval timeout');
    }
  };

  const notPending = () =>
    refused(
      'denied',
      'This approval is no longer pending here: it was already answered, it timed out, the server restarted, ' +
        'or another server process (replica) asked it and keeps it. ' +
        'Nothing was run by this request. Call the tool again to ask anew.',
      'APPROVAL_DENIED',
    );
  const mismatch = (what: string) =>
    refused(
      'invalid',
      `This request does not match the call it continues (${what} with the ` +
        'tool, arguments and input the person was asked about). Nothing was run. Retry with exactly the same ' +
        'tool, arguments and input, or call the tool without the continuation to ask anew.',
      'RETRY_MISMATCH',
    );

  /**
   * A retry for a call another server process asked (a log shared by replicas): the call is re-prepared from the
   * retry's own request and runs only when its request digest (`isSameRequest`), approval key, input digest and
   * bundle are the ones recorded when the person was asked. Deciding it is the claim: the log takes one decision per call (checked in the append
   * transaction), so of two replicas or two retries exactly one goes on. Undefined when the log has no such call
   * for this session.
   */
  const resumeShared = async (
    callId: string,
    info: SessionInfo,
    answer: ApprovalAnswer,
    ctx: CallContext,
    retry: CallRequest,
  ): Promise<CallResult | undefined> => {
    const audit = await deps.audit();
    const sp = await audit.pendingCall?.(callId);
    if (sp === undefined) return undefined;
    const principal = info.principal === undefined ? undefined : principalDigest(info.principal);
    const ours = sp.sessionId === info.id || sp.sessionId.startsWith(`${info.id}.`);
    if (!ours || sp.principalSha256 !== principal) return undefined;
    const s = await sessions.get(info);
    await syncGate(audit, s);
    const what = `${sp.skill ?? sp.tool}/${sp.script ?? ''}`;
    // What the person was asked about, whole (the args and the script's name too, which the key may leave out), by
    // the rule of a retry in one process. A call an older version asked has no digest: refused, it cannot be told
    // apart from another (the client asks anew, or its retry lands on the replica holding the call).
    if (sp.requestSha256 === undefined || !isSameRequest({ requestSha256: sp.requestSha256 }, retry))
      return mismatch(what);
    let call: PreparedCall;
    try {
      call = await prepare(retry);
    } catch (e) {
      if (!isSkillsError(e)) throw e;
      return mismatch(what);
    }
    // And what binds it now (the catalog may have changed since): the key, the input, the bundle.
    const same =
      call.bound.approvalKey === sp.approvalKey &&
      call.bound.input.input_sha256 === sp.inputSha256 &&
      call.bundle.sha256 === sp.bundleSha256 &&
      call.req.tool === sp.tool &&
      call.skill.name === sp.skill &&
      call.script === sp.script;
    if (!same) return mismatch(what);
    const o: ApprovalOutcome = s.gate.isAborted()
      ? { decision: 'denied', reason: 'session_aborted' }
      : interpretAnswer(answer);
    const d = decisionEvents(s.gate, sp.sessionId, callId, sp.approvalKey, o, ctx.channel, {
      caller: s.caller,
      mac: signer.macFor(sp.sessionId, callId, call, o.decision),
    });
    const approved = o.decision === 'approved' || o.decision === 'approved_for_session';
    const events = approved
      ? d.events
      : [...d.events, finishedEvent(sp.sessionId, callId, 'denied', { code: 'APPROVAL_DENIED' })];
    try {
      await commit(audit, s, events, d.apply);
    } catch (e) {
      // Decided meanwhile (another retry, another replica, the asking one's timeout): this one is not the claim.
      if (isDecidedElsewhere(e)) return notPending();
      if (approved && isStoppedRefusal(e)) return stoppedMeanwhile(audit, s, sp.sessionId, callId, call);
      throw e;
    }
    if (approved) return run(audit, { ...s, auditId: sp.sessionId }, call, callId, ctx);
    if (o.decision === 'abort') await stopSession(audit, s);
    return refused('denied', refusalMessage(o.reason, refusalContext(call)), 'APPROVAL_DENIED', callId);
  };

  const resume = async (
    callId: string,
    info: SessionInfo,
    answer: ApprovalAnswer,
    ctx: CallContext,
    retry?: CallRequest,
  ): Promise<CallResult> => {
    const p = pending.get(callId);
    if (p === undefined) {
      // The answer came after skills-mcp stopped waiting (a modern client's retry): the refusal it got then.
      const timedOut = late.take(callId, info.id);
      if (timedOut !== undefined) return timedOut;
    }
    if (p === undefined && retry !== undefined) {
      const shared = await resumeShared(callId, info, answer, ctx, retry);
      if (shared !== undefined) return shared;
    }
    if (p === undefined || p.session.info.id !== info.id || p.recording === true) return notPending();
    if (retry !== undefined && !isSameRequest(p.call, retry))
      return mismatch(`${p.call.skill.name}/${p.call.script}`);
    if (p.approved) {
      // The decision is already durable (recordAnswer): run it now for the retrying client.
      pending.take(callId);
      return deps.audit().then((audit) => run(audit, p.session, p.call, callId, ctx));
    }
    // A decline or cancel too fast for a person: the client answered without showing the form.
    const unseen =
      ctx.channel === 'elicitation' ? unseenAnswer(answer, now() - p.askedAt, ctx.client) : undefined;
    const outcome: ApprovalOutcome =
      unseen === undefined ? interpretAnswer(answer) : { decision: 'denied', reason: 'answered_unseen' };
    return decide(callId, outcome, ctx.channel, ctx, true, unseen);
  };

  /** The client cancelled the tool call while its approval waited: recorded at once, distinctly, nothing runs. */
  const abandon = async (callId: string, info: SessionInfo): Promise<CallResult> => {
    const p = pending.get(callId);
    // An approval already recorded (console) stays for the client's next call.
    if (p === undefined || p.session.info.id !== info.id || p.recording === true || p.approved)
      return notPending();
    const { channel } = p;
    return decide(callId, { decision: 'denied', reason: 'request_cancelled' }, channel, {
      canAsk: false,
      channel,
    });
  };

  const recordAnswer = async (
    callId: string,
    info: SessionInfo,
    answer: ApprovalAnswer,
    channel: CallContext['channel'],
  ): Promise<Recorded> => {
    const p = pending.get(callId);
    if (p === undefined || p.session.info.id !== info.id || p.approved || p.recording === true) {
      throw new SkillsError('APPROVAL_DENIED', 'this approval is no longer pending');
    }
    const outcome = interpretAnswer(answer);
    if (
      (outcome.decision === 'approved' || outcome.decision === 'approved_for_session') &&
      !p.session.gate.isAborted()
    ) {
      const d = decisionEvents(
        p.session.gate,
        p.session.auditId,
        callId,
        p.call.bound.approvalKey,
        outcome,
        channel,
        {
          caller: p.session.caller,
          mac: signer.macFor(p.session.auditId, callId, p.call, outcome.decision),
        },
      );
      const audit = await deps.audit();
      // Until the decision is durable, a retry or another answer finds the call taken (the write awaits).
      p.recording = true;
      try {
        await commit(audit, p.session, d.events, d.apply);
      } catch (e) {
        delete p.recording;
        if (!lostToConsole(audit, p, e)) throw e;
        // Another replica's console decided first: its decision holds.
        const won = await shared.lostRecord(p, callId);
        if (won === undefined) throw e;
        return won;
      }
      delete p.recording;
      p.approved = true;
      shared.settle(callId);
      return { kind: 'approved' };
    }
    return { kind: 'closed', result: await decide(callId, outcome, channel, { canAsk: false, channel }) };
  };

  const artifact = (info: SessionInfo, callId: string, path: string): RecordedArtifact | undefined => {
    const o = outputs.get(callId);
    return o === undefined || o.sessionId !== info.id ? undefined : o.files.get(path);
  };

  const endSession = async (info: SessionInfo, reason: 'client_closed' | 'signal' | 'shutdown' | 'error') => {
    pending.closeAll(info.id);
    synced.delete(info.id);
    const live = sessions.forget(info.id);
    if (live === undefined) return;
    const s = await live.catch(() => undefined);
    // The session's read-only records land first (the first one may still be waiting for the store to open).
    await readOnly.settled(info.id);
    if (s !== undefined) {
      await caches.unrecorded.flush(s.auditId); // ends of runs the log refused: else they would read `interrupted`
      await (await deps.audit()).endSession(s.auditId, reason);
    }
    await removeSessionFolder(deps.runsDir, info, log);
  };

  const close = (): Promise<void> => {
    pending.closeAll();
    late.clear();
    shared.close();
    return caches.unrecorded.close();
  };

  const pendingView = (callId: string) => {
    const p = pending.get(callId);
    return p === undefined ? undefined : approvalView(p.call, config, deps.runsDir, callId);
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
        synced.delete(info.id);
        void sessions.forget(info.id)?.catch(() => undefined);
      }
      throw e;
    }
  };

  let prepared: Promise<void> | undefined;
  return {
    entryInput: caches.entryInput,
    prepareRuns: () => (prepared ??= prepareRuns(deps)),
    begin: (req, ctx) => forgetIfEnded(req.session, () => begin(req, ctx)),
    pendingView,
    resume: (callId, info, answer, ctx, retry) =>
      forgetIfEnded(info, () => resume(callId, info, answer, ctx, retry)),
    abandon: (callId, info) => forgetIfEnded(info, () => abandon(callId, info)),
    recordAnswer,
    onPendingClosed: pending.onClosed,
    recordSharedAnswer: async (callId, seen, answer) =>
      recordSharedAnswer(await deps.audit(), config, signer, callId, seen, answer),
    onDecidedElsewhere: (listener) => shared.onDecidedElsewhere(listener),
    recordReadOnly: readOnly.record,
    artifact,
    endSession,
    close,
  };
}
