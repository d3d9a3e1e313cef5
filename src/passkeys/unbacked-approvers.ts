import { ApproverCredentialSchema } from './approvers-file.js';
import type { CredentialChange } from './passkey-records.js';
import { enrolmentAt } from './verify-passkey-approvals.js';

/** A passkey the approvers table holds that the log's enrolments do not back, and why. */
export interface UnbackedApprover {
  credentialId: string;
  reason: string;
}

/**
 * The rows of the approvers table (`skills_mcp.approvers`) that no enrolment in force at the log's end backs: a
 * passkey inserted into the table directly (by a holder of the server's database role), one the log removed, or one
 * whose public key, name or subject differs from its enrolment. Such a row would let its passkey approve calls that
 * `audit verify` then fails; this names it before it does. The signature counter is the table's own (not recorded).
 */
export function unbackedApprovers(
  changes: readonly CredentialChange[],
  rows: readonly unknown[],
): UnbackedApprover[] {
  const out: UnbackedApprover[] = [];
  for (const row of rows) {
    const r = ApproverCredentialSchema.safeParse(row);
    if (!r.success) {
      const id = (row as { id?: unknown } | null)?.id;
      out.push({ credentialId: typeof id === 'string' ? id : '?', reason: 'the row is not a passkey' });
      continue;
    }
    const c = r.data;
    const { current, removed } = enrolmentAt(changes, c.id, Infinity);
    if (current === undefined)
      out.push({
        credentialId: c.id,
        reason:
          removed === undefined
            ? 'no enrolment in the log backs it (inserted into the table directly?)'
            : `the log removed it at event ${removed.eventId}`,
      });
    else if (current.publicKey !== c.public_key)
      out.push({
        credentialId: c.id,
        reason: `its public key is not the one enrolled at event ${current.eventId}`,
      });
    else if (current.name !== c.label || current.subject !== c.subject)
      out.push({
        credentialId: c.id,
        reason: `its name or subject is not the one enrolled at event ${current.eventId}`,
      });
  }
  return out;
}
