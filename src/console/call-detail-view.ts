import type { AuditEvent } from '../audit/types.js';
import type { CallDetail } from '../audit/types.js';
import type { EventType } from '../audit/event-types.js';
import { callStatus, decisionLine, evidenceLine, sandboxEvidence } from './calls-view.js';
import { callerLine, callerOfCall } from './caller-view.js';
import { badge, formatDuration, formatTime, short, shown, toneOf } from './format.js';
import { html, type Html } from './html.js';
import { escapeForDisplay } from '../escape-for-display.js';
import type { ApprovalView } from '../approvals/approval-view.js';

const payloadOf = <T extends EventType>(d: CallDetail, type: T) =>
  (d.events.find((e) => e.type === type) as AuditEvent<T> | undefined)?.payload;

const names = (list: readonly string[]): Html =>
  list.length === 0
    ? html`<span class="muted">none</span>`
    : html`${list.map((n, i) => html`${i === 0 ? '' : ', '}<code>${shown(n, 80)}</code>`)}`;

function evidenceList(ev: Record<string, unknown> | undefined): Html {
  if (ev === undefined) return html`<p class="muted">No process was started for this call.</p>`;
  return html`<dl class="facts">
    ${Object.entries(ev).map(
      ([k, v]) =>
        html`<dt>${shown(k, 40)}</dt>
          <dd><code>${shown(typeof v === 'string' ? v : (JSON.stringify(v) ?? ''), 120)}</code></dd>`,
    )}
  </dl>`;
}

/**
 * The arguments and input of a call waiting for a decision, in full: the approval card marks what it does not show
 * (secret-named, long or nested values) and links here. Escaped; secret-named values are shown too, to the person.
 */
function fullInput(v: ApprovalView): Html {
  const json = v.input === undefined ? 'null' : JSON.stringify(v.input, null, 2);
  return html`<h2 id="input-title">Full input (waiting for your decision)</h2>
    <section class="card" aria-labelledby="input-title">
      <p>Arguments (${v.argv.length}):</p>
      <pre class="full">
${v.argv.map((a) => escapeForDisplay(JSON.stringify(a), { json: true })).join('\n')}</pre>
      <p>Input (${v.inputSummary.input_bytes} bytes, sha256 ${short(v.inputSummary.input_sha256)}):</p>
      <pre class="full">${escapeForDisplay(json, { multiline: true, json: true })}</pre>
    </section>`;
}

/**
 * One call from the audit log: request hashes and key names, policy, approval, sandbox evidence, output sizes,
 * artifacts (path, size, hash) and the event trail. The log holds no values, contents or env values to show.
 */
export function callDetail(d: CallDetail, base: string, pending?: ApprovalView): Html {
  const c = d.call;
  const req = payloadOf(d, 'tool_call_requested');
  const policy = payloadOf(d, 'policy_decided');
  const started = payloadOf(d, 'tool_call_started');
  const finished = payloadOf(d, 'tool_call_finished');
  const status = callStatus(d);
  const what = c.skill === null ? c.tool : `${c.skill}${c.script === null ? '' : ` / ${c.script}`}`;
  return html`<p><a href="${base}/">← Approvals and recent calls</a></p>
    <h2 id="call-title">Call <span class="mono">${c.callId}</span></h2>
    <section class="card" aria-labelledby="call-title">
      <dl class="facts">
        <dt>What</dt>
        <dd><code>${shown(what)}</code> (tool <code>${shown(c.tool, 80)}</code>)</dd>
        <dt>Status</dt>
        <dd>
          ${badge(status, toneOf(status))}${c.exitCode === null ? '' : ` exit ${c.exitCode}`}${finished?.signal === undefined ? '' : ` signal ${finished.signal}`}${finished?.error_code === undefined ? '' : html` <code>${finished.error_code}</code>`}
        </dd>
        <dt>Requested</dt>
        <dd>${formatTime(c.requestedTs)} · session ${short(c.sessionId, 8)}</dd>
        <dt>Caller</dt>
        <dd>${callerLine(callerOfCall(d))}</dd>
        <dt>Duration</dt>
        <dd>${formatDuration(c.durationMs)}</dd>
        <dt>Input</dt>
        <dd>${c.inputBytes} bytes, sha256 ${short(c.inputSha256)}; keys ${names(req?.input_keys ?? [])}</dd>
        <dt>Bundle</dt>
        <dd>${short(c.bundleSha256)}</dd>
        <dt>Approval key</dt>
        <dd>${short(c.approvalKey)}</dd>
        <dt>Policy</dt>
        <dd>
          ${policy === undefined ? '—' : html`${policy.decision}, by <code>${shown(policy.rule ?? 'mode')}</code>; risk ${badge(policy.risk.level, toneOf(policy.risk.level))} <code>${policy.risk.code}</code> ${shown(policy.risk.reason)}`}
        </dd>
        <dt>Decision</dt>
        <dd>${decisionLine(d)}</dd>
        <dt>Sandbox</dt>
        <dd>${evidenceLine(sandboxEvidence(d))}</dd>
        <dt>Command</dt>
        <dd>
          ${started === undefined ? '—' : html`<code>${started.argv.map((a) => shown(a, 80)).join(' ')}</code>${started.args_count === undefined ? '' : ` + ${started.args_count} arguments (sha256 ${started.args_sha256?.slice(0, 12) ?? '—'})`}`}
        </dd>
        <dt>Env names</dt>
        <dd>${started === undefined ? '—' : names(started.env_keys)}</dd>
        <dt>Output</dt>
        <dd>
          ${finished === undefined ? '—' : html`stdout ${finished.stdout_bytes} bytes${finished.stdout_sha256 === null ? '' : html` (sha256 ${short(finished.stdout_sha256)})`}, stderr ${finished.stderr_bytes} bytes${finished.truncated === true ? ', truncated' : ''}`}
        </dd>
      </dl>
    </section>
    ${pending === undefined ? '' : fullInput(pending)}
    <h2>Sandbox evidence</h2>
    <section class="card">${evidenceList(sandboxEvidence(d))}</section>
    <h2>Artifacts</h2>
    ${
      d.artifacts.length === 0
        ? html`<p class="muted">None.</p>`
        : html`<div class="table-wrap">
            <table>
              <thead>
                <tr>
                  <th scope="col">Path</th>
                  <th scope="col">Bytes</th>
                  <th scope="col">sha256</th>
                </tr>
              </thead>
              <tbody>
                ${d.artifacts.map(
                  (a) =>
                    html`<tr>
                      <td><code>${shown(a.path, 120)}</code></td>
                      <td class="num">${a.bytes}</td>
                      <td>${short(a.sha256)}</td>
                    </tr>`,
                )}
              </tbody>
            </table>
          </div>`
    }
    <h2>Events</h2>
    <div class="table-wrap">
      <table>
        <thead>
          <tr>
            <th scope="col">#</th>
            <th scope="col">Time</th>
            <th scope="col">Event</th>
          </tr>
        </thead>
        <tbody>
          ${d.events.map(
            (e) =>
              html`<tr>
                <td class="num">${e.eventId}</td>
                <td>${formatTime(e.ts)}</td>
                <td><code>${e.type}</code></td>
              </tr>`,
          )}
        </tbody>
      </table>
    </div>`;
}
