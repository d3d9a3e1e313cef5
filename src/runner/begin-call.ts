import { newCallId } from '../audit/call-id.js';
import type { ApprovalChannel } from '../audit/approval-payload-schemas.js';
import { isSkillsError } from '../errors.js';
import { approvalMessage } from '../approvals/approval-message.js';
import { approvalSchema } from '../approvals/approval-request.js';
import { shownRecord } from '../approvals/approval-shown.js';
import { cardDisplay } from '../approvals/card-display.js';
import { displayCall } from '../approvals/display-call.js';
import { noApproverMessage, refusalMessage } from '../approvals/refusal-message.js';
import { resolveGate, type PasskeyGate } from '../approvals/resolve-gate.js';
import { approvalView } from './approval-view.js';
import { decisionEvents, finishedEvent, policyEvent, requestedEvent } from './call-events.js';
import { refusalContext } from './call-refusals.js';
import { refused } from './call-result.js';
import { needsFourEyes, needsPasskey } from './passkey-check.js';
import type { PreparedCall } from './prepare-call.js';
import { recordInvalid } from './record-invalid.js';
import type { RunnerCore } from './runner-core.js';
import type { Begin, CallContext, Runner } from './runner-types.js';

/**
 * A call's first step: the request and its policy are recorded, then it runs (allowed, or covered by a session
 * grant), is refused, or waits for a person's answer (`expire` closes it when none comes in time).
 */
export function beginCall(core: RunnerCore, expire: (callId: string) => void): Runner['begin'] {
  const { config, signer, pending } = core;
  return async (req, ctx): Promise<Begin> => {
    const audit = await core.deps.audit();
    const s = await core.sessions.get(req.session);
    await core.replicas().catchUp(audit, s);
    let call: PreparedCall;
    try {
      call = await core.prepare(req);
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
      ...(needsPasskey(config.approval, call) ? { passkey: passkeyGate(ctx) } : {}),
      ...(needsFourEyes(config.approval, call) ? { fourEyes: { signedIn: s.caller !== undefined } } : {}),
    });
    if (gate.action === 'console') return { kind: 'console' };
    const mac = (decision: string) => signer.macFor(s.auditId, callId, call, decision);
    if (gate.action === 'run') {
      // Request, policy and decision go into tool_call_started's transaction (or the refusal's): nothing of the
      // skill happens before it.
      const via = gate.outcome.reason === 'cached' ? 'session' : 'rules';
      const d = decisionEvents(s.gate, s.auditId, callId, key, gate.outcome, via, {
        mac: mac(gate.outcome.decision),
      });
      const before = {
        events: [...head, ...d.events],
        written: () => d.apply.forEach((ev) => s.gate.apply(ev)),
      };
      return { kind: 'done', result: await core.run(audit, s, call, callId, ctx, before) };
    }
    if (gate.action === 'refuse') {
      const { reason } = gate.outcome;
      const channel: ApprovalChannel =
        reason === 'rules'
          ? 'rules'
          : reason === 'no_approver' || reason === 'passkey_required' || reason === 'four_eyes_required'
            ? 'none'
            : 'session';
      const d = decisionEvents(s.gate, s.auditId, callId, key, gate.outcome, channel, {
        mac: mac(gate.outcome.decision),
      });
      const end = finishedEvent(s.auditId, callId, 'denied', { code: 'APPROVAL_DENIED' });
      await core.commit(audit, s, [...head, ...d.events, end], d.apply);
      const context = refusalContext(call, config);
      const text =
        reason === 'no_approver'
          ? noApproverMessage({ ...context, formNotTrusted: ctx.formNotTrusted === true })
          : refusalMessage(reason, context);
      const code = reason === 'rules' ? 'POLICY_DENIED' : 'APPROVAL_DENIED';
      return { kind: 'done', result: refused('denied', text, code, callId) };
    }
    const full = pending.reserve(callId, s.info.id, call.bound.input.input_bytes);
    if (full !== undefined) {
      await core.commit(audit, s, [
        ...head,
        finishedEvent(s.auditId, callId, 'denied', { code: 'APPROVALS_BUSY' }),
      ]);
      const text = `skills-mcp did not ask about ${call.skill.name}/${call.script}: ${full}. Nothing was run.`;
      return { kind: 'done', result: refused('denied', text, 'APPROVALS_BUSY', callId) };
    }
    // What the person is shown, decided before it is recorded: the log keeps its risk, findings and text digest.
    const view = approvalView(call, config, core.deps.runsDir, callId);
    const form = { message: approvalMessage(view, displayCall(view)), requestedSchema: approvalSchema() };
    const shown =
      ctx.channel === 'console'
        ? shownRecord(cardDisplay(view))
        : shownRecord(displayCall(view), form.message);
    try {
      await core.commit(audit, s, [
        ...head,
        {
          type: 'approval_requested',
          sessionId: s.auditId,
          callId,
          payload: {
            approval_key: key,
            channel: ctx.channel,
            shown,
            ...(ctx.urlElicitation === true ? { url_elicitation: true as const } : {}),
            // What an approval of it must hold, for `audit verify` to check without the config.
            ...(needsPasskey(config.approval, call) ? { passkey_required: true as const } : {}),
            ...(needsFourEyes(config.approval, call) ? { four_eyes_required: true as const } : {}),
          },
        },
      ]);
    } catch (e) {
      pending.release(callId);
      throw e;
    }
    const timer = setTimeout(() => expire(callId), config.approval.timeout_ms);
    timer.unref();
    pending.add(callId, { call, session: s, timer, askedAt: core.now(), channel: ctx.channel });
    if (ctx.channel === 'console') core.replicas().share(audit, s, callId, key, view);
    return { kind: 'ask', callId, form, view };
  };
}

/** Where a call that needs a passkey can be asked, given who can be asked for this request. */
const passkeyGate = (ctx: CallContext): PasskeyGate =>
  ctx.passkeyConsole !== true ? 'missing' : ctx.channel === 'console' ? 'ready' : 'console';
