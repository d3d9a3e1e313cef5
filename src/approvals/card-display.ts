import type { ApprovalView } from './approval-view.js';
import { displayCall, type DisplayedCall } from './display-call.js';

/** Risk findings an approval card lists; the rest are counted. */
export const MAX_CARD_FINDINGS = 5;

/**
 * What an approval console card shows of a call, and nothing more: the displayed call with at most
 * {@link MAX_CARD_FINDINGS} findings, and how many input keys and findings there are in all. Small whatever the input:
 * values are shown in full only when short, else shortened, with the call's page showing them in full (see
 * `displayCall`).
 */
export interface CardDisplay extends DisplayedCall {
  keyCount: number;
  findingCount: number;
}

export function cardDisplay(view: ApprovalView): CardDisplay {
  const d = displayCall(view, 'console');
  return {
    ...d,
    risk: { ...d.risk, findings: d.risk.findings.slice(0, MAX_CARD_FINDINGS) },
    keyCount: view.inputSummary.input_keys.length,
    findingCount: d.risk.findings.length,
  };
}
