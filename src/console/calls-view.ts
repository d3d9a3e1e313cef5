import { shortCallId } from '../audit/call-id.js';
import type { CallLog } from '../audit/call-log.js';
import type { CallDetail } from '../audit/types.js';
import { approverOfCall, approverSuffix } from './caller-view.js';
import { badge, formatDuration, formatTime, shown, toneOf } from './format.js';
import { html, type Html } from './html.js';

/** The most recent calls with their approval and events, newest first. */
export async function recentCalls(audit: CallLog, limit: number): Promise<CallDetail[]> {
  const rows = (await audit.listCalls({ limit })).reverse();
  const details = await Promise.all(rows.map(async (row) => audit.getCall(row.callId)));
  return details.filter((d): d is CallDetail => d !== undefined);
}

/** The sandbox evidence recorded when the call started (`tool_call_started`), or undefined. */
export function sandboxEvidence(d: CallDetail): Record<string, unknown> | undefined {
  const started = d.events.find((e) => e.type === 'tool_call_started');
  return started?.type === 'tool_call_started' ? started.payload.sandbox : undefined;
}

/** One line: adapter, profile, network, seccomp. */
export function evidenceLine(ev: Record<string, unknown> | undefined): Html {
  if (ev === undefined) return html`<span class="muted">not run</span>`;
  const adapter = typeof ev.adapter === 'string' ? ev.adapter : '?';
  const parts = [
    typeof ev.profile === 'string' ? `profile ${ev.profile}` : '',
    typeof ev.network === 'string' ? `network ${ev.network}` : '',
    ev.seccomp === true ? 'seccomp' : '',
  ].filter(Boolean);
  return html`${adapter === 'off' ? badge('no sandbox', 'bad') : html`<code>${adapter}</code>`}
  ${parts.join(' · ')}`;
}

/** The status of a call, or where it stands while open. */
export function callStatus(d: CallDetail): string {
  return d.call.status ?? (d.approval !== null && d.approval.decision === null ? 'pending' : d.call.state);
}

export function decisionLine(d: CallDetail): Html {
  const c = d.call;
  if (c.approvalDecision === null)
    return html`<span class="muted">${c.valid ? '—' : 'invalid request'}</span>`;
  const channel = d.approval?.channel;
  return html`${badge(c.approvalDecision, toneOf(c.approvalDecision))}
  ${c.approvalReason ?? ''}${channel === undefined ? '' : html` <span class="muted">via ${channel}</span>`}${approverSuffix(approverOfCall(d))}`;
}

/** The recent-calls table (a stacked list on narrow screens). */
export function callsTable(calls: CallDetail[], base: string): Html {
  if (calls.length === 0) return html`<p class="muted">No calls recorded yet.</p>`;
  return html`<div class="table-wrap">
    <table class="calls">
      <thead>
        <tr>
          <th scope="col">Time</th>
          <th scope="col">Call</th>
          <th scope="col">Skill and script</th>
          <th scope="col">Status</th>
          <th scope="col">Duration</th>
          <th scope="col">Decision</th>
          <th scope="col">Sandbox</th>
        </tr>
      </thead>
      <tbody>
        ${calls.map((d) => {
          const c = d.call;
          const status = callStatus(d);
          const what = c.skill === null ? c.tool : c.script === null ? c.skill : `${c.skill} / ${c.script}`;
          return html`<tr>
            <td data-label="Time">${formatTime(c.requestedTs)}</td>
            <td data-label="Call">
              <a href="${base}/calls/${c.callId}" class="mono">${shortCallId(c.callId)}</a>
            </td>
            <td data-label="Skill">
              <code>${shown(what, 80)}</code
              >${c.script === null ? html` <span class="muted">(${shown(c.tool, 40)})</span>` : ''}
            </td>
            <td data-label="Status">
              ${badge(status, toneOf(status))}${c.exitCode === null ? '' : html` <span class="muted">exit ${c.exitCode}</span>`}
            </td>
            <td data-label="Duration" class="num">${formatDuration(c.durationMs)}</td>
            <td data-label="Decision">${decisionLine(d)}</td>
            <td data-label="Sandbox">${evidenceLine(sandboxEvidence(d))}</td>
          </tr>`;
        })}
      </tbody>
    </table>
  </div>`;
}
