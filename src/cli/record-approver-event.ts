import { approverChangeEvent, type ApproverChange } from '../passkeys/approver-change-event.js';
import { appendCliEvent, type CliAudit } from './append-cli-event.js';

export type { ApproverChange };

/**
 * Appends one enrolment or removal to the audit log, in its own `cli` session, before approvers.json changes: a
 * passkey `audit verify` does not find enrolled in the log does not approve there. Throws when the log refuses it.
 */
export function recordApproverEvent(audit: CliAudit, change: ApproverChange): void {
  appendCliEvent(audit, 'skills-mcp approvers', approverChangeEvent(change));
}
