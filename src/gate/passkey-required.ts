import type { ApprovalRequire } from '../config/approval-schema.js';
import { isFourEyesRequired } from './four-eyes-required.js';
import { globToRegExp } from './match-rule.js';
import type { RiskLevel } from './risk-patterns.js';

/**
 * Whether `approval.require` asks a passkey for a call of `skill` rated `risk`: always (`passkey`), never
 * (`none`), or when the skill matches a listed name or pattern or the risk is a listed level (four eyes imply a
 * passkey too).
 */
export function isPasskeyRequired(
  require: ApprovalRequire,
  call: { skill: string; risk: RiskLevel },
): boolean {
  if (require === 'none') return false;
  if (require === 'passkey') return true;
  if (isFourEyesRequired(require, call.skill)) return true;
  if (require.passkey === undefined) return false;
  const { skills, risk } = require.passkey;
  return risk.includes(call.risk) || skills.some((p) => globToRegExp(p, true).test(call.skill));
}
