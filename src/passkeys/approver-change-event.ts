import type { EventPayloads } from '../audit/payload-schemas.js';
import { packageVersion } from '../package-root.js';
import type { ApproverCredential } from './approvers-file.js';

/** A passkey's enrolment or removal, as `skills-mcp approvers` records it in the audit log. */
export type ApproverChange =
  | { type: 'approver_enrolled'; credential: ApproverCredential }
  | { type: 'approver_removed'; credential: ApproverCredential; at: Date };

/** The event an enrolment or removal appends: the same type and payload whichever store holds the log. */
export type ApproverChangeEvent =
  | { type: 'approver_enrolled'; payload: EventPayloads['approver_enrolled'] }
  | { type: 'approver_removed'; payload: EventPayloads['approver_removed'] };

/** The `session_started` payload (but its `owner`) of the `cli` session an enrolment or removal is recorded in. */
export const approverSessionPayload = (): Omit<EventPayloads['session_started'], 'owner'> => ({
  transport: 'cli',
  server_version: packageVersion(),
  client: { name: 'skills-mcp approvers' },
});

/** The audit event of an enrolment or removal. */
export function approverChangeEvent(change: ApproverChange): ApproverChangeEvent {
  const c = change.credential;
  const who = {
    credential_id: c.id,
    public_key: c.public_key,
    name: c.label,
    ...(c.subject === undefined ? {} : { subject: c.subject }),
  };
  return change.type === 'approver_enrolled'
    ? { type: 'approver_enrolled', payload: { ...who, enrolled_at: c.enrolled_at } }
    : { type: 'approver_removed', payload: { ...who, removed_at: change.at.toISOString() } };
}
