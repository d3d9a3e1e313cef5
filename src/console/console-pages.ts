import { DECISION_TITLES } from '../approvals/approval-decision.js';
import type { ApprovalView } from '../approvals/approval-view.js';
import { shortCallId } from '../audit/call-id.js';
import type { CallDetail } from '../audit/types.js';
import { approvalCard } from './approval-card.js';
import type { ConsoleApproval } from './approval-queue.js';
import { callDetail } from './call-detail-view.js';
import { callsTable } from './calls-view.js';
import { formatTime, shown } from './format.js';
import { html, type Html } from './html.js';
import { pageLayout } from './page-layout.js';
import { MAX_SHOWN } from './inbound-approvals.js';

const RECENT_DECISIONS = 10;

function decided(list: ConsoleApproval[], base: string): Html {
  const done = list.filter((a) => a.state !== 'pending').slice(0, RECENT_DECISIONS);
  if (done.length === 0) return html`<p class="muted">None yet.</p>`;
  return html`<ul class="plain">
    ${done.map(
      (a) =>
        html`<li>
          <a href="${base}/approvals/${a.id}"><code>${shown(a.view.skill)} / ${shown(a.view.script)}</code></a
          >:
          ${a.decision === undefined ? 'no decision' : DECISION_TITLES[a.decision]}${a.decidedElsewhere === true ? ' in another server’s console' : ''}${a.outcome === undefined ? '' : ` · ${a.outcome}`}
          <span class="muted">(asked ${formatTime(a.askedAt)})</span>
        </li>`,
    )}
  </ul>`;
}

/** Calls, or why the audit log could not be read. */
export type CallsView = { ok: true; calls: CallDetail[] } | { ok: false };

function callsSection(calls: CallsView, base: string): Html {
  return calls.ok
    ? callsTable(calls.calls, base)
    : html`<p class="notice">The audit log could not be read; the server log has the details.</p>`;
}

/** Says how many approvals waiting on other server processes are not listed, when some are not. */
function notListedNotice(n: number): Html | string {
  if (n === 0) return '';
  return html`<p class="notice">
    ${n} more ${n === 1 ? 'approval is' : 'approvals are'} waiting on other server processes, not listed here:
    at most ${MAX_SHOWN} are listed, taken in turn from each caller. They appear as listed ones are decided or
    time out.
  </p>`;
}

/**
 * The main page: approvals waiting, recent decisions, recent calls. Regions refresh while the page is open.
 * `notListed`: approvals waiting elsewhere that are not listed (past the cap).
 */
export function indexPage(
  base: string,
  approvals: ConsoleApproval[],
  calls: CallsView,
  notListed = 0,
): string {
  // Oldest first: a new request is appended below, so it never moves a card the person is about to click.
  const pending = approvals.filter((a) => a.state === 'pending').reverse();
  const body = html`<section id="pending" data-live aria-live="polite" aria-labelledby="pending-title">
      <h2 id="pending-title">Waiting for your decision (${pending.length})</h2>
      ${notListedNotice(notListed)}
      ${pending.length === 0 && notListed === 0 ? html`<p class="muted">Nothing is waiting for a decision. New requests appear here.</p>` : pending.map((a) => approvalCard(a, base))}
    </section>
    <section id="decided" data-live aria-labelledby="decided-title">
      <h2 id="decided-title">Recent decisions</h2>
      ${decided(approvals, base)}
    </section>
    <section id="calls" data-live aria-labelledby="calls-title">
      <h2 id="calls-title">Recent calls</h2>
      ${callsSection(calls, base)}
    </section>`;
  const title = pending.length === 0 ? 'Approvals' : `(${pending.length}) Approval needed`;
  return pageLayout({ base, title, body });
}

/** One approval, the page the link in the client points to. */
export function approvalPage(base: string, a: ConsoleApproval): string {
  const body = html`<p><a href="${base}/">← All approvals and recent calls</a></p>
    <div id="approval" data-live>${approvalCard(a, base, 'h2')}</div>`;
  return pageLayout({ base, title: a.state === 'pending' ? 'Approval needed' : 'Approval', body });
}

/** One call from the audit log; while it waits for a decision, also the input it asks to run with, in full. */
export function callPage(base: string, d: CallDetail, pending?: ApprovalView): string {
  return pageLayout({
    base,
    title: `Call ${shortCallId(d.call.callId)}`,
    body: callDetail(d, base, pending),
  });
}

/** A short page for refusals and unknown ids (never echoes the request). */
export function messagePage(base: string, title: string, text: string): string {
  return pageLayout({
    base,
    title,
    body: html`<h2>${title}</h2>
      <p>${text}</p>
      <p><a href="${base}/">Go to the approval console</a></p>`,
  });
}
