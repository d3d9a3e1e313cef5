import type { ApprovalRequire } from '../config/approval-schema.js';
import { globToRegExp } from './match-rule.js';

/**
 * Whether `approval.require` asks four eyes for a call of `skill`: a passkey approval by an enrolled person other
 * than the signed-in caller.
 */
export function isFourEyesRequired(require: ApprovalRequire, skill: string): boolean {
  if (typeof require === 'string' || require.four_eyes === undefined) return false;
  return require.four_eyes.skills.some((p) => globToRegExp(p, true).test(skill));
}
