import * as z from 'zod';
import type { CallLog } from '../audit/call-log.js';
import type { ApprovalView } from '../approvals/approval-view.js';
import { APPROVAL_DECISIONS } from '../approvals/approval-vocabulary.js';
import type { Logger } from '../log.js';
import type { ApprovalQueue, ConsoleApproval } from './approval-queue.js';
import type { SharedApprovals } from './inbound-approvals.js';
import { CONSOLE_CSS, CONSOLE_ICON, CONSOLE_JS } from './assets.js';
import { recentCalls } from './calls-view.js';
import type { ConsolePasskeys } from '../passkeys/console-passkeys.js';
import { markPasskeyForms, routePasskey } from '../passkeys/passkey-routes.js';
import { PASSKEY_JS } from '../passkeys/passkey-script.js';
import type { RouteRequest, RouteResponse } from './route-types.js';
import { approveHop } from './approve-hop.js';
import { approvalPage, callPage, indexPage, messagePage, type CallsView } from './console-pages.js';

export interface RouteDeps {
  /** `/<secret>`: the prefix of every link. */
  base: string;
  queue: ApprovalQueue;
  /** Approvals waiting on the other server processes sharing the audit log. */
  shared: SharedApprovals;
  audit: () => Promise<CallLog>;
  log: Logger;
  /** What a call still waiting for a decision asks about (its full input), from the runner. */
  pendingView: (callId: string) => ApprovalView | undefined;
  /** Called on every page view (the console uses it to tell whether a page is open). */
  onPageView: () => void;
  /** Passkey approvals: with a passkey enrolled, an approving decision needs an assertion. */
  passkeys?: ConsolePasskeys;
  /** `http://localhost:PORT`, the origin passkey assertions come from. */
  origin?: () => string;
}

/** The decision form, as posted. */
export const DecisionFormSchema = z.strictObject({
  csrf: z.string().min(1).max(200).describe('The token bound to this approval, from the form'),
  decision: z.enum(APPROVAL_DECISIONS).describe('The button pressed'),
});

const RECENT_CALLS = 25;
const ID = /^[A-Za-z0-9_-]{1,64}$/;
const CALL_ID = /^[A-Za-z0-9_.:-]{1,128}$/;

const page = (status: number, body: string): RouteResponse => ({
  status,
  type: 'text/html; charset=utf-8',
  body,
});

/** Routes one console request that passed the guard. GET and HEAD never change anything. */
export async function routeConsole(req: RouteRequest, deps: RouteDeps): Promise<RouteResponse> {
  const { base, queue } = deps;
  if (req.secretless === true) return approveHop(req, deps);
  const parts = req.path.split('/').slice(1);
  if (req.method === 'POST') {
    if (parts[0] === 'approvals' && parts.length === 2 && ID.test(parts[1] ?? '')) {
      return decide(parts[1]!, req, deps);
    }
    const step = parts[2];
    if (
      parts[0] === 'approvals' &&
      (step === 'passkey-options' || step === 'passkey') &&
      ID.test(parts[1] ?? '')
    )
      return deps.passkeys === undefined || deps.origin === undefined
        ? page(404, messagePage(base, 'Not found', 'Passkey approvals are not on.'))
        : routePasskey(parts[1]!, step, req, { ...deps, passkeys: deps.passkeys, origin: deps.origin });
    return page(405, messagePage(base, 'Not allowed', 'Only the decision form can be posted.'));
  }
  if (req.path === '/console.css') return { status: 200, type: 'text/css; charset=utf-8', body: CONSOLE_CSS };
  if (req.path === '/console.js')
    return { status: 200, type: 'text/javascript; charset=utf-8', body: CONSOLE_JS };
  if (req.path === '/passkey.js')
    return { status: 200, type: 'text/javascript; charset=utf-8', body: PASSKEY_JS };
  if (req.path === '/icon.svg') return { status: 200, type: 'image/svg+xml', body: CONSOLE_ICON };
  deps.onPageView();
  if (req.path === '/') {
    const list = await approvals(deps);
    return withPasskey(page(200, indexPage(base, list, await calls(deps), deps.shared.notListed())), deps);
  }
  if (parts[0] === 'approvals' && parts.length === 2) {
    const id = ID.test(parts[1] ?? '') ? parts[1]! : undefined;
    let a = id === undefined ? undefined : queue.get(id);
    if (a === undefined && id !== undefined && deps.shared.get(id) !== undefined) {
      // Waiting elsewhere: look again, so that the page shows it decided or closed there.
      await deps.shared.list();
      a = deps.shared.get(id);
    }
    if (a === undefined) {
      return page(
        404,
        messagePage(base, 'Unknown approval', 'No such approval here (the server may have restarted).'),
      );
    }
    return withPasskey(page(200, approvalPage(base, a)), deps);
  }
  if (parts[0] === 'calls' && parts.length === 2 && CALL_ID.test(parts[1] ?? '')) {
    try {
      const d = await (await deps.audit()).getCall(parts[1]!);
      if (d !== undefined) return page(200, callPage(base, d, await pendingView(parts[1]!, deps)));
    } catch (err) {
      deps.log.warn({ err }, 'approval console could not read the audit log');
    }
    return page(404, messagePage(base, 'Unknown call', 'No such call in the audit log.'));
  }
  return page(404, messagePage(base, 'Not found', 'There is no such page in the approval console.'));
}

/** With a passkey enrolled, the page's decision forms ask for one. */
const withPasskey = async (r: RouteResponse, deps: RouteDeps): Promise<RouteResponse> =>
  (await deps.passkeys?.enrolled()) === true ? { ...r, body: markPasskeyForms(r.body) } : r;

/** What a call still waiting asks about: here, or (looked up again) on another server process. */
async function pendingView(callId: string, deps: RouteDeps): Promise<ApprovalView | undefined> {
  const here = deps.pendingView(callId);
  if (here !== undefined) return here;
  await deps.shared.list();
  return deps.shared.fullView(callId);
}

/** This process's approvals and those waiting on other server processes, newest first. */
async function approvals(deps: RouteDeps): Promise<ConsoleApproval[]> {
  const elsewhere = await deps.shared.list();
  return [...deps.queue.list(), ...elsewhere].sort((x, y) => y.askedAt - x.askedAt);
}

async function calls(deps: RouteDeps): Promise<CallsView> {
  try {
    return { ok: true, calls: await recentCalls(await deps.audit(), RECENT_CALLS) };
  } catch (err) {
    deps.log.warn({ err }, 'approval console could not read the audit log');
    return { ok: false };
  }
}

async function decide(id: string, req: RouteRequest, deps: RouteDeps): Promise<RouteResponse> {
  const { base, queue } = deps;
  if (req.contentType?.split(';')[0]?.trim().toLowerCase() !== 'application/x-www-form-urlencoded') {
    return page(
      415,
      messagePage(base, 'Not accepted', 'Decisions are sent by the form on the approval page.'),
    );
  }
  const form = DecisionFormSchema.safeParse(Object.fromEntries(new URLSearchParams(req.body ?? '')));
  if (!form.success) {
    return page(
      400,
      messagePage(base, 'Not accepted', 'The form was incomplete. Reload the page and try again.'),
    );
  }
  if (form.data.decision.startsWith('approved') && (await deps.passkeys?.enrolled()) === true) {
    return page(
      403,
      messagePage(base, 'Not accepted', 'Approving needs your passkey: use the button on the approval page.'),
    );
  }
  const result =
    queue.get(id) === undefined && deps.shared.get(id) !== undefined
      ? await deps.shared.decide(id, form.data.csrf, form.data.decision)
      : await queue.decide(id, form.data.csrf, form.data.decision);
  switch (result) {
    case 'decided':
      deps.log.info({ approval: id, decision: form.data.decision }, 'console decision');
      return {
        status: 303,
        type: 'text/plain; charset=utf-8',
        body: 'See Other',
        location: `${base}/approvals/${id}`,
      };
    case 'bad_token':
      return page(
        403,
        messagePage(base, 'Not accepted', 'This form does not belong to that approval. Reload the page.'),
      );
    case 'not_pending':
      return page(
        409,
        messagePage(base, 'Already decided', 'This approval is no longer waiting for a decision.'),
      );
    case 'unknown':
      return page(404, messagePage(base, 'Unknown approval', 'No such approval here.'));
  }
}
