import { sha256Hex } from '../gate/approval-key.js';
import { MAX_FINDINGS } from './approval-message.js';
import type { DisplayedCall } from './display-call.js';
import type { RiskLevel } from '../gate/risk-patterns.js';

/**
 * What the person was shown when asked, as the audit log keeps it (`approval_requested.shown`): the risk and the
 * findings as the form or card listed them (raised when something was not shown), and the sha256 of the form's text,
 * so `skills-mcp audit show` can be held against what was on screen. No values: rule ids, levels and a digest.
 */
export interface ShownRecord {
  risk: { level: RiskLevel; code: string };
  /** The findings listed, in order (the form and the card list at most {@link MAX_FINDINGS}). */
  findings: { rule: string; level: RiskLevel }[];
  /** Findings in all, when more than were listed. */
  findings_count?: number;
  /** sha256 of the UTF-8 message of the approval form (form and terminal); absent for the console's card. */
  message_sha256?: string;
}

export function shownRecord(shown: Pick<DisplayedCall, 'risk'>, message?: string): ShownRecord {
  const { level, code, findings } = shown.risk;
  return {
    risk: { level, code },
    findings: findings.slice(0, MAX_FINDINGS).map((f) => ({ rule: f.rule, level: f.level })),
    ...(findings.length > MAX_FINDINGS ? { findings_count: findings.length } : {}),
    ...(message === undefined ? {} : { message_sha256: sha256Hex(message) }),
  };
}
