import type { Approver } from '../audit/approval-payload-schemas.js';
import type { CallerRecord } from '../audit/caller-record-schema.js';
import type { CallDetail } from '../audit/types.js';
import { short, shown } from './format.js';
import { html, type Html } from './html.js';

/** The signed-in caller recorded on a call (HTTP with OAuth), if any. */
export function callerOfCall(d: CallDetail): CallerRecord | undefined {
  const e = d.events.find((x) => x.type === 'tool_call_requested');
  return e?.type === 'tool_call_requested' ? e.payload.caller : undefined;
}

/** Who a person was, when one answered the call's approval. */
export function approverOfCall(d: CallDetail): Approver | undefined {
  const e = d.events.findLast((x) => x.type === 'approval_decided');
  return e?.type === 'approval_decided' ? e.payload.approver : undefined;
}

/** A caller's subject (or the digest recorded instead), with the issuer on hover. */
export const callerName = (c: CallerRecord): Html =>
  c.subject !== undefined
    ? html`<code title="${shown(c.issuer, 500)}">${shown(c.subject, 80)}</code>`
    : html`<span title="${shown(c.issuer, 500)}">subject sha256 ${short(c.subject_sha256 ?? null)}</span>`;

/** The caller line of a call page. */
export const callerLine = (c: CallerRecord | undefined): Html =>
  c === undefined
    ? html`<span class="muted">not signed in</span>`
    : html`${callerName(c)} <span class="muted">from ${shown(c.issuer, 120)}</span>`;

/** ` by alice`, ` in the console`, … after a decision; empty when nobody answered. */
export function approverSuffix(a: Approver | undefined): Html {
  if (a === undefined) return html``;
  if (a.kind === 'console') return html` <span class="muted">in the console</span>`;
  if (a.kind === 'terminal') return html` <span class="muted">on the terminal</span>`;
  return a.caller === undefined
    ? html` <span class="muted">by the client's user</span>`
    : html` <span class="muted">by</span> ${callerName(a.caller)}`;
}
