import { escapeForDisplay } from '../escape-for-display.js';
import type { ApprovalView } from './approval-message.js';
import type { Risk } from './guard.js';
import { maxRiskLevel } from './guard.js';
import {
  displayArgv,
  displayName,
  displayValue,
  MAX_SHOWN_CHARS,
  secretNameMatcher,
} from './display-value.js';

/** Input keys shown with their values; the rest are counted. */
export const MAX_KEYS = 8;
/** Arguments shown on the Command line; the rest are counted. */
export const MAX_ARGS = 12;

/** What the approval form and the console card show of one call, decided once for both. */
export interface DisplayedCall {
  /** Runner, script (or `-m module`) and the first arguments, escaped; then how many more. */
  command: string;
  /** The first input keys with their values as shown. */
  values: { name: string; text: string }[];
  /** Input keys past the first {@link MAX_KEYS}. */
  moreKeys: number;
  /** Values, arguments and keys not shown in full (hidden, summarized or past the caps). */
  notShown: number;
  /** The call's risk; at least medium, with a finding saying so, when something is not shown in full. */
  risk: Pick<Risk, 'level' | 'code' | 'findings'>;
}

/** Decides what a person sees of a call: every value in full, or marked, counted and raising the risk. */
export function displayCall(view: ApprovalView): DisplayedCall {
  const isSecret = secretNameMatcher(view.secretNames);
  const args = displayArgv(view.argv.slice(0, MAX_ARGS), isSecret);
  const moreArgs = Math.max(0, view.argv.length - MAX_ARGS);
  const target =
    view.module === undefined ? escapeForDisplay(view.script) : `-m ${escapeForDisplay(view.module)}`;
  const command = [view.runner ?? '', target, args.text].filter(Boolean).join(' ');

  const keys = view.inputSummary.input_keys;
  const record =
    typeof view.input === 'object' && view.input !== null && !Array.isArray(view.input)
      ? (view.input as Record<string, unknown>)
      : undefined;
  // An input that is not an object (a list, a string) is shown as one value.
  const entries: [string, unknown][] =
    record !== undefined
      ? keys.slice(0, MAX_KEYS).map((k) => [k, record[k]])
      : view.input === undefined || view.input === null
        ? []
        : [['(input)', view.input]];
  const shown = entries.map(([k, v]) => ({
    name: record === undefined ? k : displayName(k),
    v: displayValue(k, v, isSecret),
    clipped: k.length > MAX_SHOWN_CHARS,
  }));
  const moreKeys = record === undefined ? 0 : Math.max(0, keys.length - MAX_KEYS);
  const notShown = args.hidden + moreArgs + moreKeys + shown.filter((s) => !s.v.full || s.clipped).length;
  return {
    command: moreArgs > 0 ? `${command} … and ${moreArgs} more arguments` : command,
    values: shown.map(({ name, v }) => ({ name, text: v.text })),
    moreKeys,
    notShown,
    risk: notShown === 0 ? view.risk : raised(view.risk, notShown, view.fullInput),
  };
}

function raised(risk: ApprovalView['risk'], n: number, fullInput: string): DisplayedCall['risk'] {
  const message = `${n === 1 ? '1 value is' : `${n} values are`} not shown in full (hidden or too long): ${fullInput}`;
  const finding = { rule: 'input-not-shown', level: 'medium' as const, message };
  const level = maxRiskLevel(risk.level, 'medium');
  return {
    level,
    code: risk.level === 'low' ? finding.rule : risk.code,
    findings: [finding, ...risk.findings],
  };
}
