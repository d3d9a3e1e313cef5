import type { ApprovalView } from './approval-view.js';
import type { InputSummary } from '../gate/approval-key.js';
import { describeFinding } from '../gate/guard.js';
import { escapeForDisplay } from '../escape-for-display.js';
import { displayCall, type DisplayedCall, type FullValue } from './display-call.js';
import type { OperatorGrants } from '../gate/effective-requests.js';

/** Findings the form lists; the rest are counted. */
export const MAX_FINDINGS = 5;

/** The form's message: one screen a person can judge, then long values in full. */
export function approvalMessage(view: ApprovalView, shown: DisplayedCall = displayCall(view)): string {
  const pad = (label: string): string => `${label}:`.padEnd(9);
  const { risk } = shown;
  const paths = (list: readonly string[]) => list.map((p) => escapeForDisplay(p)).join(', ');
  const readable = view.sandbox.readablePaths ?? [];
  // The decisive facts come first, so a client that shortens long messages still shows them: Claude Code shows
  // the first three lines of a form's message only (skill and script, sandbox, risk).
  const lines = [
    `Allow skill "${escapeForDisplay(view.skill)}" to run ${escapeForDisplay(view.script)}?`,
    `${pad('Sandbox')}${view.sandbox.enforced ? `profile ${view.sandbox.profile}` : 'OFF (not sandboxed)'}, network ${view.sandbox.network}`,
    `${pad('Risk')}${risk.level.toUpperCase()}${risk.level === 'low' ? '' : ` (${risk.code})`}`,
    ...risk.findings.slice(0, MAX_FINDINGS).map((f) => `  - ${escapeForDisplay(describeFinding(f))}`),
    ...(risk.findings.length > MAX_FINDINGS ? [`  - and ${risk.findings.length - MAX_FINDINGS} more`] : []),
    `${pad('Reads')}${
      readable.length === 0
        ? "the skill's own files only"
        : `the workspace ${paths(readable)} (every file in it), and the skill's own files`
    }`,
    `${pad('Writes')}${view.sandbox.writablePaths.length === 0 ? 'nothing' : paths(view.sandbox.writablePaths)}`,
    ...(view.sandbox.sessionFolder === undefined
      ? []
      : [
          `${pad('Session')}this run can read and change the session folder ${escapeForDisplay(view.sandbox.sessionFolder)}: what an earlier run of this session left there is input to this one`,
        ]),
    ...operatorGrantLines(view.operator),
    `${pad('Policy')}${view.policy.decision}, by ${escapeForDisplay(view.policy.rule)}`,
    ...installLines(view.install, pad('Install')),
    `${pad('Script')}${escapeForDisplay(view.script)}  (bundle ${view.bundleSha256.slice(0, 12)})`,
    ...(view.source === undefined ? [] : [`${pad('Source')}git ${escapeForDisplay(view.source)}`]),
    `${pad('Command')}${shown.command}`,
    `${pad('Input')}${inputLine(view.inputSummary)}`,
    ...shown.values.map((v) => `  ${v.name}: ${v.text}`),
    ...(shown.moreKeys > 0 ? [`  and ${shown.moreKeys} more keys`] : []),
    ...fullValueLines(shown.inFull),
  ];
  return lines.join('\n');
}

/** Long values in full: each line behind `| `, escaped like the facts, so no line of a value can pose as one. */
function fullValueLines(values: readonly FullValue[]): string[] {
  if (values.length === 0) return [];
  return [
    '',
    'In full (each line as the script gets it, escaped as above):',
    ...values.flatMap((v) => [`  ${v.name} (${v.facts}):`, ...v.lines.map((l) => `    ${l}`)]),
  ];
}

/** Where it comes from, after each grant the operator set: the skill's SKILL.md did not ask for it. */
export const OPERATOR_SOURCE = 'set by the operator in skills-mcp.yaml';

/** One line per grant the operator set, e.g. `Workspace: write (set by the operator in skills-mcp.yaml)`. */
export function operatorGrantLines(g: OperatorGrants | undefined): string[] {
  if (g === undefined) return [];
  return [
    ...(g.workspace === undefined ? [] : [`Workspace: ${g.workspace}`]),
    ...(g.network === undefined ? [] : [`Network: ${g.network}`]),
    ...(g.profile === undefined ? [] : [`Profile: ${escapeForDisplay(g.profile)}`]),
  ].map((l) => `${l} (${OPERATOR_SOURCE})`);
}

function installLines(install: ApprovalView['install'], label: string): string[] {
  if (install === undefined) return [];
  return [
    `${label}first, in a sandbox with network, writing only the new environment folder${install.binaryOnly ? ' (binary packages only, no install scripts)' : ' (source builds and install scripts ALLOWED)'}:`,
    ...install.commands.map((c) => `  $ ${escapeForDisplay(c)}`),
    ...install.sources.map((s) => `  from ${escapeForDisplay(s)}`),
  ];
}

function inputLine(s: InputSummary): string {
  const keys = s.input_keys.length === 1 ? '1 key' : `${s.input_keys.length} keys`;
  return `${keys}, ${s.input_bytes} bytes (sha256 ${s.input_sha256.slice(0, 12)})`;
}
