import type { ApprovalRule } from '../config/approval-schema.js';
import { matchesCaller, type Caller } from './caller.js';

/**
 * Simple globs for policy rules. In skill patterns `*` matches any run of characters. In script patterns `*`
 * stays within one path segment and `**` crosses segments; a script pattern without `/` also matches the
 * file name alone (`fill_form.py` matches `scripts/fill_form.py`).
 */
export function globToRegExp(pattern: string, crossSegments: boolean): RegExp {
  let source = '';
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern.charAt(i);
    if (c === '*' && pattern.charAt(i + 1) === '*') {
      source += '.*';
      i++;
    } else if (c === '*') {
      source += crossSegments ? '.*' : '[^/]*';
    } else {
      source += c.replace(/[\\^$.+?()[\]{}|/]/g, '\\$&');
    }
  }
  return new RegExp(`^${source}$`, 'u');
}

/**
 * Whether a rule applies to a skill and script (script relative to the skill folder, POSIX) and, when the rule names
 * callers, to the signed-in caller (a rule naming callers never applies without one).
 */
export function matchesRule(
  rule: Pick<ApprovalRule, 'skill' | 'script' | 'caller'> & Partial<Pick<ApprovalRule, 'action'>>,
  skill: string,
  script: string,
  caller?: Caller,
): boolean {
  if (!globToRegExp(rule.skill, true).test(skill)) return false;
  if (rule.caller !== undefined && !matchesCaller(rule.caller, caller, rule.action ?? 'ask')) return false;
  if (rule.script === undefined) return true;
  const re = globToRegExp(rule.script, false);
  if (re.test(script)) return true;
  return !rule.script.includes('/') && re.test(script.slice(script.lastIndexOf('/') + 1));
}

/**
 * `rules[2] (skill: pdf, script: scripts/*.py → allow)`: how a rule is named in decisions and messages. A caller
 * condition shows as `caller: listed` only: the names it lists are the operator's, not the caller's to read.
 */
export function describeRule(rule: ApprovalRule, index: number): string {
  const script = rule.script === undefined ? '' : `, script: ${rule.script}`;
  const caller = rule.caller === undefined ? '' : ', caller: listed';
  return `rules[${index}] (skill: ${rule.skill}${script}${caller} → ${rule.action})`;
}
