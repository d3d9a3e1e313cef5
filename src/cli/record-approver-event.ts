import type { ApproverCredential } from '../passkeys/approvers-file.js';
import { appendCliEvent, type CliAudit, type CliEvent } from './append-cli-event.js';

export type ApproverChange =
  | { type: 'approver_enrolled'; credential: ApproverCredential }
  | { type: 'approver_removed'; credential: ApproverCredential; at: Date };

/**
 * Appends one enrolment or removal to the audit log, in its own `cli` session, before approvers.json changes: a
 * passkey `audit verify` does not find enrolled in the log does not approve there. Throws when the log refuses it.
 */
export function recordApproverEvent(audit: CliAudit, change: ApproverChange): void {
  const c = change.credential;
  const who = {
    credential_id: c.id,
    public_key: c.public_key,
    name: c.label,
    ...(c.subject === undefined ? {} : { subject: c.subject }),
  };
  const event: CliEvent =
    change.type === 'approver_enrolled'
      ? { type: 'approver_enrolled', payload: { ...who, enrolled_at: c.enrolled_at } }
      : { type: 'approver_removed', payload: { ...who, removed_at: change.at.toISOString() } };
  appendCliEvent(audit, 'skills-mcp approvers', event);
}
