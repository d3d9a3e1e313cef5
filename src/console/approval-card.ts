import { describeFinding } from '../gate/index.js';
import { DECISION_TITLES } from '../approvals/approval-decision.js';
import { operatorGrantLines } from '../approvals/approval-message.js';
import { APPROVAL_DECISIONS } from '../approvals/approval-vocabulary.js';
import { cardDisplay } from '../approvals/card-display.js';
import type { ApprovalView } from '../approvals/approval-view.js';
import type { CardDisplay } from '../approvals/card-display.js';
import { shortCallId } from '../audit/call-id.js';
import type { ConsoleApproval } from './approval-queue.js';
import { badge, formatTime, short, shown, toneOf } from './format.js';
import { html, type Html } from './html.js';

/** The inputs a person sees: every value in full or marked, and a link to the whole input when one is not. */
function inputFacts(view: ApprovalView, d: CardDisplay, callLink: string): Html {
  const s = view.inputSummary;
  return html`${d.keyCount} ${d.keyCount === 1 ? 'key' : 'keys'}, ${s.input_bytes} bytes (sha256
  ${short(s.input_sha256)})
  ${
    d.values.length === 0
      ? ''
      : html`<ul class="plain">
          ${d.values.map((v) => html`<li><code>${v.name}</code>: <code>${v.text}</code></li>`)}${d.moreKeys > 0 ? html`<li>and ${d.moreKeys} more keys</li>` : ''}
        </ul>`
  }${d.notShown > 0 || d.shortened > 0 || d.moreKeys > 0 ? html`<p><a href="${callLink}">See the full input</a></p>` : ''}`;
}

/** Everything an approval message shows, as a definition list: what decides (sandbox, network, risk) first. */
export function approvalFacts(a: ConsoleApproval, base: string): Html {
  const v = a.view;
  const d = a.display ?? cardDisplay(v);
  const risk = d.risk;
  const callLink = `${base}/calls/${a.callId}`;
  const findings = risk.findings;
  return html`<dl class="facts">
    <dt>Skill</dt>
    <dd><code>${shown(v.skill)}</code></dd>
    <dt>Script</dt>
    <dd><code>${shown(v.script)}</code> (bundle ${short(v.bundleSha256)})</dd>
    ${
      v.source === undefined
        ? ''
        : html`<dt>Source</dt>
            <dd>git <code>${shown(v.source)}</code></dd>`
    }
    <dt>Sandbox</dt>
    <dd>
      ${v.sandbox.enforced ? html`profile <code>${v.sandbox.profile}</code>` : badge('OFF: not sandboxed', 'bad')}
    </dd>
    <dt>Network</dt>
    <dd>${v.sandbox.network === 'none' ? 'none' : badge('full network access', 'warn')}</dd>
    <dt>Reads</dt>
    <dd>
      ${
        (v.sandbox.readablePaths ?? []).length === 0
          ? html`the skill's own files only`
          : html`${badge('the workspace', 'warn')}
            ${(v.sandbox.readablePaths ?? []).map((p) => html`<code>${shown(p)}</code> `)}(every file in it),
            and the skill's own files`
      }
    </dd>
    <dt>Writes</dt>
    <dd>
      ${
        v.sandbox.writablePaths.length === 0
          ? 'nothing'
          : html`<ul class="plain">
              ${v.sandbox.writablePaths.map((p) => html`<li><code>${shown(p)}</code></li>`)}
            </ul>`
      }
    </dd>
    ${
      v.operator === undefined
        ? ''
        : html`<dt>Operator</dt>
            <dd>
              <ul class="plain">
                ${operatorGrantLines(v.operator).map((l) => html`<li>${shown(l)}</li>`)}
              </ul>
            </dd>`
    }
    <dt>Risk</dt>
    <dd>
      ${badge(risk.level.toUpperCase(), toneOf(risk.level))}${risk.level === 'low' ? '' : html` <code>${risk.code}</code>`}${
        findings.length === 0
          ? ''
          : html`<ul class="plain">
              ${findings.map((f) => html`<li>${shown(describeFinding(f))}</li>`)}${
                d.findingCount > findings.length
                  ? html`<li>and ${d.findingCount - findings.length} more</li>`
                  : ''
              }
            </ul>`
      }
    </dd>
    <dt>Policy</dt>
    <dd>${v.policy.decision}, by <code>${shown(v.policy.rule)}</code></dd>
    <dt>Command</dt>
    <dd><code>${d.command}</code></dd>
    <dt>Input</dt>
    <dd>${inputFacts(v, d, callLink)}</dd>
    <dt>Asked</dt>
    <dd>
      ${formatTime(a.askedAt)}${a.session.caller === undefined ? '' : html` by <code>${shown(a.session.caller.subject, 80)}</code>`}
      · session ${short(a.session.id, 8)} · call
      <a href="${callLink}">${shortCallId(a.callId)}</a>
    </dd>
    ${
      a.elsewhere === undefined
        ? ''
        : html`<dt>Waiting on</dt>
            <dd>
              another server process, <code>${shown(a.elsewhere, 120)}</code>: it runs the call once approved
            </dd>`
    }
  </dl>`;
}

const BUTTON_CLASS: Record<string, string> = { approved: 'approve', abort: 'abort' };

/** The four decisions as one plain form: works without JavaScript; the token binds it to this approval. */
function decisionForm(a: ConsoleApproval, base: string): Html {
  return html`<form class="decide" method="post" action="${base}/approvals/${a.id}">
    <input type="hidden" name="csrf" value="${a.csrf}" />
    ${APPROVAL_DECISIONS.map(
      (d) =>
        html`<button type="submit" name="decision" value="${d}" class="${BUTTON_CLASS[d] ?? ''}">
          ${DECISION_TITLES[d]}
        </button>`,
    )}
  </form>`;
}

function status(a: ConsoleApproval): Html {
  const decided =
    a.decision === undefined
      ? html`No decision`
      : html`${badge(DECISION_TITLES[a.decision], toneOf(a.decision))}${a.decidedElsewhere === true ? ' in another server’s console' : ''}${a.decidedAt === undefined ? '' : html` at ${formatTime(a.decidedAt)}`}`;
  return html`<p>${decided}${a.outcome === undefined ? '' : html` · ${a.outcome}`}</p>`;
}

/** One approval: the facts, then the decision buttons while it is pending, else what became of it. */
export function approvalCard(a: ConsoleApproval, base: string, headingLevel: 'h2' | 'h3' = 'h3'): Html {
  const open = a.state === 'pending';
  const title = html`Run <code>${shown(a.view.script)}</code> of skill <code>${shown(a.view.skill)}</code>?`;
  const heading =
    headingLevel === 'h2'
      ? html`<h2 id="approval-${a.id}-title">${title}</h2>`
      : html`<h3 id="approval-${a.id}-title">${title}</h3>`;
  return html`<section class="card${open ? ' pending' : ''}" aria-labelledby="approval-${a.id}-title">
    ${heading} ${approvalFacts(a, base)} ${open ? decisionForm(a, base) : status(a)}
  </section>`;
}
