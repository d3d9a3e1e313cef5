import {
  inputRequired,
  type CallToolResult,
  type InputRequiredResult,
  type ServerContext,
} from '@modelcontextprotocol/server';
import type { ApprovalConsole, ConsoleApproval } from '../console/index.js';
import { requestKey } from '../console/request-key.js';
import { refused, type CallResult } from '../runner/call-result.js';
import type { CallRequest } from '../runner/call-request.js';
import type { CallContext, Runner } from '../runner/runner-types.js';
import type { ServerDeps } from './server-deps.js';
import { SkillsError } from '../errors.js';
import { askUrlInRequest, urlElicitationMessage } from './url-elicitation.js';

/**
 * How the client is pointed at the approval's secret-free console link (URL-mode elicitation): in a 2025-era
 * request an `elicitation/create` sent while the call waits; in a 2026-era one an `input_required` answer whose
 * retry (state `via: url`) then waits. Its answer never approves.
 */
export type UrlMode = { era: 'legacy' } | { era: 'modern'; mint: (callId: string) => Promise<string> };

/** While a call waits for the console, progress every this often (keeps clients that reset on progress waiting). */
const HEARTBEAT_MS = 15_000;

/** How the person reaches the console: by their own route, never a link passed through the model. */
const WHERE = 'the page opened in their browser, or the link `skills-mcp console` prints in their terminal';

const NO_LONGER_PENDING = refused(
  'denied',
  'This approval is no longer pending: it timed out or its session ended. Nothing was run. Call the tool again to ask anew.',
  'APPROVAL_DENIED',
);

/** Progress for one request, with a counter so values always increase across the wait and the run. */
function progressSender(ctx: ServerContext): ((message: string) => Promise<void>) | undefined {
  const token = ctx.mcpReq._meta?.progressToken;
  if (token === undefined) return undefined;
  let n = 0;
  return (message) =>
    ctx.mcpReq
      .notify({ method: 'notifications/progress', params: { progressToken: token, progress: ++n, message } })
      .catch(() => undefined);
}

/** The answer when the wait ends before the person decided: actionable, and the approval stays open. */
function pendingResult(a: ConsoleApproval, timeoutMs: number, where: string): CallToolResult {
  const target = `${a.view.skill}/${a.view.script}`;
  const text = [
    `Approval pending: skills-mcp is waiting for the user to approve or deny running ${target}. Nothing has run yet.`,
    `Only the user can decide, in the skills-mcp approval console (${where}).`,
    'Ask the user to decide there, then call this tool again with exactly the same arguments to get the result ' +
      '(the decision is kept for that call; calling again before they decide waits for the decision again). ' +
      `The request expires ${Math.round(timeoutMs / 1000)} s after it was made.`,
  ].join('\n');
  return {
    isError: true,
    content: [{ type: 'text', text }],
    _meta: {
      'skills-mcp/call_id': a.callId,
      'skills-mcp/status': 'approval_pending',
      'skills-mcp/code': 'APPROVAL_PENDING',
    },
  };
}

/**
 * A gated call from a client that cannot show the approval form, with the approval console as the approver.
 * A retry of a request still known to the console continues that call (same call id, same approval key): it runs
 * a kept approval, gets a refusal recorded meanwhile, or waits again. Otherwise the runner begins a new call; when
 * it asks, the console shows it, the client gets a progress notification and a log message saying a person decides there, and
 * the request waits up to `console_wait_ms` (under common client timeouts) before answering "pending".
 */
export async function consoleCall(
  deps: ServerDeps & { runner: Runner; console: ApprovalConsole },
  req: CallRequest,
  ctx: ServerContext,
  base: CallContext,
  toResult: (r: CallResult) => CallToolResult,
  url?: UrlMode,
): Promise<CallToolResult | InputRequiredResult> {
  const { runner, console: con, config } = deps;
  const send = progressSender(ctx);
  const cc: CallContext = {
    ...base,
    canAsk: true,
    channel: 'console',
    ...(url === undefined ? {} : { urlElicitation: true as const }),
    ...(send === undefined ? {} : { progress: (_p: number, message: string) => send(message) }),
  };
  const key = requestKey(req);
  let a = con.queue.retryOf(key);
  if (a !== undefined) {
    const claim = await con.queue.claim(a);
    if (claim.kind === 'result') return toResult(claim.result);
    if (claim.kind === 'run') {
      const r = await runner.resume(a.callId, req.session, claim.answer, cc);
      con.queue.finish(a, r);
      return toResult(r);
    }
    if (claim.kind === 'none') a = undefined;
  }
  if (a === undefined) {
    const begun = await runner.begin(req, cc);
    if (begun.kind === 'done') return toResult(begun.result);
    // Asked with the console as the channel, a call is never sent on to the console.
    if (begun.kind === 'console') throw new SkillsError('INTERNAL', 'a console call was sent to the console');
    a = con.queue.add({ callId: begun.callId, session: req.session, requestKey: key, view: begun.view });
    con.announce(a);
  }
  if (url?.era === 'modern') {
    const link = inputRequired.elicitUrl({ url: con.approveUrl(a), message: urlElicitationMessage(a) });
    return inputRequired({ inputRequests: { approval: link }, requestState: await url.mint(a.callId) });
  }
  const asked = url?.era === 'legacy' ? askUrlInRequest(ctx, con.approveUrl(a), a) : undefined;
  const withdraw = new AbortController();
  let declined: 'decline' | 'cancel' | undefined;
  void asked?.withdrawn.then((action) => {
    declined = action;
    withdraw.abort();
  });
  const target = `${a.view.skill}/${a.view.script}`;
  // With a passkey enrolled, the approval's secret-free link too: it leads on only the person's signed-in browser.
  const where = (await con.passkeysEnrolled())
    ? `${WHERE}; or this approval's link, ${con.approveUrl(a)}, opened in the browser where the console is open`
    : WHERE;
  void send?.(`Waiting for the user to approve ${target} in the skills-mcp approval console`);
  void ctx.mcpReq
    .log(
      'notice',
      `Approval needed to run ${target}: the user decides in the skills-mcp approval console (${where}).`,
      'skills-mcp',
    )
    .catch(() => undefined);
  const heartbeat =
    send === undefined
      ? undefined
      : setInterval(() => void send(`Still waiting for the user to approve ${target}`), HEARTBEAT_MS);
  heartbeat?.unref();
  const wake = await con.queue
    .wait(a, {
      holdMs: config.approval.console_wait_ms,
      signal: AbortSignal.any([ctx.mcpReq.signal, withdraw.signal]),
    })
    .finally(() => clearInterval(heartbeat));
  asked?.end(wake.kind === 'answer' || wake.kind === 'closed');
  switch (wake.kind) {
    case 'released':
      return pendingResult(a, config.approval.timeout_ms, where);
    case 'closed':
      return toResult(wake.result ?? NO_LONGER_PENDING);
    case 'answer': {
      const r = await runner.resume(a.callId, req.session, wake.answer, cc);
      con.queue.finish(a, r);
      return toResult(r);
    }
    case 'aborted': {
      if (declined !== undefined && !ctx.mcpReq.signal.aborted) return toResult(await withdrawn(a, declined));
      // The client cancelled the request (its timeout, or its user stopped it): no one refused, it gave up.
      const r = await runner.abandon(a.callId, req.session);
      con.queue.finish(a, r, 'cancelled by the client; not run');
      return toResult(r);
    }
  }

  function withdrawn(a: ConsoleApproval, action: 'decline' | 'cancel'): Promise<CallResult> {
    return withdrawApproval(deps, req, cc, a, action);
  }
}

/** The client declined or cancelled the URL elicitation: the request is withdrawn, recorded as its answer. */
async function withdrawApproval(
  deps: { runner: Runner; console: ApprovalConsole },
  req: CallRequest,
  cc: CallContext,
  a: ConsoleApproval,
  action: 'decline' | 'cancel',
): Promise<CallResult> {
  const r = await deps.runner.resume(a.callId, req.session, { action }, { ...cc, channel: 'elicitation' });
  deps.console.queue.finish(
    a,
    r,
    `${action === 'decline' ? 'declined' : 'cancelled'} in the client; not run`,
  );
  return r;
}

/**
 * The retry of a 2026-era request that was sent a URL elicitation (state `via: url`), declined or cancelled: the
 * approval still pending is withdrawn. Undefined when there is none to withdraw (decided meanwhile, or gone): the
 * retry then continues as any console call does.
 */
export async function withdrawnByRetry(
  deps: { runner: Runner; console: ApprovalConsole },
  req: CallRequest,
  base: CallContext,
  callId: string,
  action: 'decline' | 'cancel',
): Promise<CallResult | undefined> {
  const a = deps.console.queue.retryOf(requestKey(req));
  if (a === undefined || a.callId !== callId || !deps.console.queue.take(a)) return undefined;
  return withdrawApproval(deps, req, { ...base, channel: 'console' }, a, action);
}
