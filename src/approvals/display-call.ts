import { escapeForDisplay } from '../escape-for-display.js';
import type { ApprovalView } from './approval-view.js';
import type { Risk } from '../gate/guard.js';
import { maxRiskLevel } from '../gate/guard.js';
import {
  displayArgv,
  displayName,
  displayValue,
  MAX_SHOWN_CHARS,
  secretNameMatcher,
  type Shown,
} from './display-value.js';

/** Input keys shown with their values among the facts; the rest are shown below them (form) or counted (card). */
export const MAX_KEYS = 8;
/** Arguments shown on the Command line; the rest likewise. */
export const MAX_ARGS = 12;
/** What the form shows in full below its facts, in all: a value past these is not shown on the form. */
export const MAX_FULL_CHARS = 8_000;
export const MAX_FULL_LINES = 150;

/**
 * Where the person decides: the approval form (elicitation, terminal), a text that shows long values in full below
 * its facts while they fit; or the approval console's card, whose call page shows the whole input.
 */
export type DisplayPlace = 'form' | 'console';

/** A value shown in full below the facts: its name, what it is, and its lines, escaped. */
export interface FullValue {
  name: string;
  facts: string;
  lines: string[];
}

/** What the approval form and the console card show of one call, decided once for both. */
export interface DisplayedCall {
  /** Runner, script (or `-m module`) and the first arguments, escaped; then how many more. */
  command: string;
  /** The first input keys with their values as shown (short in full, long shortened, secret hidden). */
  values: { name: string; text: string }[];
  /** Input keys past the first {@link MAX_KEYS}. */
  moreKeys: number;
  /** On the form: long values, later keys and arguments in full, for below the facts. Empty on the card. */
  inFull: FullValue[];
  /** Values shortened on their line: in full below (form) or on the call's page (card). */
  shortened: number;
  /** Values, arguments and keys the person cannot read where they decide: secret-named, or too long for the form. */
  notShown: number;
  /** The call's risk; at least medium, with a finding saying so, when something is not shown. */
  risk: Pick<Risk, 'level' | 'code' | 'findings'>;
}

const lineCost = (lines: readonly string[]): number => lines.reduce((n, l) => n + l.length + 1, 0);

/** Decides what a person sees of a call: every value in full, shortened with its full text elsewhere, or hidden. */
export function displayCall(view: ApprovalView, where: DisplayPlace = 'form'): DisplayedCall {
  const isSecret = secretNameMatcher(view.secretNames);
  const inFull: FullValue[] = [];
  let left = { chars: MAX_FULL_CHARS, lines: MAX_FULL_LINES };
  let notShown = 0;
  let shortened = 0;

  /** Room below the facts for these lines? Takes it when there is. */
  const room = (facts: string, lines: readonly string[]): boolean => {
    const cost = { chars: lineCost(lines) + facts.length, lines: lines.length + 1 };
    if (where !== 'form' || cost.chars > left.chars || cost.lines > left.lines) return false;
    left = { chars: left.chars - cost.chars, lines: left.lines - cost.lines };
    return true;
  };
  /** The text of a value on its line, its full text placed where the person can read it, or counted as not. */
  const place = (name: string, s: Shown): string => {
    if (s.full) return s.text;
    if (s.long === undefined) {
      notShown++;
      return s.text;
    }
    shortened++;
    if (where === 'console') return `${s.text} (${s.long.facts}; in full on the call's page)`;
    if (room(s.long.facts, s.long.lines)) {
      inFull.push({ name, facts: s.long.facts, lines: s.long.lines });
      return `${s.text} (${s.long.facts}; in full below)`;
    }
    notShown++;
    return `${s.text} (${s.long.facts}; too long for this form)`;
  };

  const argv = displayArgv(view.argv, isSecret);
  const args = argv.slice(0, MAX_ARGS).map((s, i) => place(`argument ${i + 1}`, s));
  const later = argv.slice(MAX_ARGS);
  if (later.length > 0)
    placeLater(
      `arguments ${MAX_ARGS + 1} to ${argv.length}`,
      later.map((shown, i) => ({ name: `argument ${MAX_ARGS + 1 + i}`, label: '', shown })),
    );
  const target =
    view.module === undefined ? escapeForDisplay(view.script) : `-m ${escapeForDisplay(view.module)}`;
  const command = [view.runner ?? '', target, ...args].filter(Boolean).join(' ');

  const keys = view.inputSummary.input_keys;
  const record =
    typeof view.input === 'object' && view.input !== null && !Array.isArray(view.input)
      ? (view.input as Record<string, unknown>)
      : undefined;
  // An input that is not an object (a list, a string) is shown as one value.
  const entries: [string, unknown][] =
    record !== undefined
      ? keys.map((k) => [k, record[k]])
      : view.input === undefined || view.input === null
        ? []
        : [['(input)', view.input]];
  const values = entries.slice(0, MAX_KEYS).map(([k, v]) => {
    const name = record === undefined ? k : displayName(k);
    if (k.length > MAX_SHOWN_CHARS) notShown++;
    return { name, text: place(name, displayValue(k, v, isSecret)) };
  });
  const moreKeys = record === undefined ? 0 : Math.max(0, keys.length - MAX_KEYS);
  if (moreKeys > 0) {
    const items = entries.slice(MAX_KEYS).map(([k, v]) => {
      if (k.length > MAX_SHOWN_CHARS) notShown++;
      const name = displayName(k);
      return { name, label: `${name}: `, shown: displayValue(k, v, isSecret) };
    });
    placeLater(`input keys ${MAX_KEYS + 1} to ${keys.length}`, items);
  }

  /**
   * Arguments or keys past the caps: below the facts as one block when it fits, else counted (card: its page). A
   * long value among them is placed like any other (its full text below, or counted as not shown); a secret is
   * counted as not shown.
   */
  function placeLater(name: string, items: { name: string; label: string; shown: Shown }[]): void {
    const at = inFull.length;
    const texts = items.map(({ name: itemName, label, shown }) => {
      if (shown.full && where === 'console') shortened++;
      return `${label}${place(itemName, shown)}`;
    });
    if (where === 'console') return;
    const lines = texts.map((t) => `| ${t}`);
    const facts = `${texts.length} more`;
    if (room(facts, lines)) {
      inFull.splice(at, 0, { name, facts, lines });
      return;
    }
    // A long or secret one was counted when placed; a short one is now on no line of the form.
    notShown += items.filter((i) => i.shown.full).length;
  }

  return {
    command: later.length > 0 ? `${command} … and ${later.length} more arguments` : command,
    values,
    moreKeys,
    inFull,
    shortened,
    notShown,
    risk: notShown === 0 ? view.risk : raised(view, notShown, where),
  };
}

function raised(view: ApprovalView, n: number, where: DisplayPlace): DisplayedCall['risk'] {
  const count = n === 1 ? '1 value is' : `${n} values are`;
  const message =
    where === 'form'
      ? `${count} not shown in full on this form (secret-named, or too long for it): ${view.fullInput}`
      : `${count} not shown in full on this card (secret-named): the call's page shows the whole input`;
  const finding = { rule: 'input-not-shown', level: 'medium' as const, message };
  const { risk } = view;
  return {
    level: maxRiskLevel(risk.level, 'medium'),
    code: risk.level === 'low' ? finding.rule : risk.code,
    findings: [finding, ...risk.findings],
  };
}
