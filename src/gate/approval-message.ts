import type { InputSummary } from './approval-key.js';
import type { Risk } from './guard.js';
import { describeFinding } from './guard.js';
import type { PolicyDecision } from './policy.js';
import { displayArgv, displayName, displayValue, escapeInvisible } from './display-value.js';

/** Everything the approval screen shows about one call. Host paths appear only where a person needs them. */
export interface ApprovalView {
  skill: string;
  /** Script path relative to the skill folder. */
  script: string;
  bundleSha256: string;
  /** Interpreter the script runs with (`python3`, `node`, `bash`), if any. */
  runner?: string;
  /** Arguments after the script (model args, or argv built from the input). */
  argv: readonly string[];
  /** The input as received: only short, non-secret top-level values are shown. */
  input: unknown;
  inputSummary: InputSummary;
  sandbox: {
    /** Profile name, e.g. `default`. */
    profile: string;
    /** False when the operator turned the sandbox off. */
    enforced: boolean;
    network: 'none' | 'full';
    /** Paths the script may write (host paths, shown to the person). */
    writablePaths: readonly string[];
  };
  risk: Pick<Risk, 'level' | 'code' | 'findings'>;
  policy: Pick<PolicyDecision, 'decision' | 'rule'>;
}

const MAX_KEYS = 8;
const MAX_FINDINGS = 5;

/** The form's message: one screen a person can judge. */
export function approvalMessage(view: ApprovalView): string {
  const pad = (label: string): string => `${label}:`.padEnd(9);
  const lines = [
    `Allow skill "${escapeInvisible(view.skill)}" to run a script?`,
    '',
    `${pad('Script')}${escapeInvisible(view.script)}  (bundle ${view.bundleSha256.slice(0, 12)})`,
    `${pad('Command')}${[view.runner ?? '', escapeInvisible(view.script), displayArgv(view.argv)].filter(Boolean).join(' ')}`,
    `${pad('Input')}${inputLine(view.inputSummary)}`,
    ...inputValues(view.input, view.inputSummary),
    `${pad('Sandbox')}${view.sandbox.enforced ? `profile ${view.sandbox.profile}` : 'OFF (not sandboxed)'}, network ${view.sandbox.network}`,
    `${pad('Writes')}${view.sandbox.writablePaths.length === 0 ? 'nothing' : view.sandbox.writablePaths.map(escapeInvisible).join(', ')}`,
    `${pad('Risk')}${view.risk.level.toUpperCase()}${view.risk.level === 'low' ? '' : ` (${view.risk.code})`}`,
    ...view.risk.findings.slice(0, MAX_FINDINGS).map((f) => `  - ${escapeInvisible(describeFinding(f))}`),
    ...(view.risk.findings.length > MAX_FINDINGS
      ? [`  - and ${view.risk.findings.length - MAX_FINDINGS} more`]
      : []),
    `${pad('Policy')}${view.policy.decision}, by ${view.policy.rule}`,
  ];
  return lines.join('\n');
}

function inputLine(s: InputSummary): string {
  const keys = s.input_keys.length === 1 ? '1 key' : `${s.input_keys.length} keys`;
  return `${keys}, ${s.input_bytes} bytes (sha256 ${s.input_sha256.slice(0, 12)})`;
}

function inputValues(input: unknown, s: InputSummary): string[] {
  if (typeof input !== 'object' || input === null || Array.isArray(input)) return [];
  const record = input as Record<string, unknown>;
  const shown = s.input_keys
    .slice(0, MAX_KEYS)
    .map((k) => `  ${displayName(k)}: ${displayValue(k, record[k])}`);
  const more = s.input_keys.length - MAX_KEYS;
  return more > 0 ? [...shown, `  and ${more} more keys`] : shown;
}
