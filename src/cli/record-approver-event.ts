import { openAuditStore } from '../audit/open-audit-store.js';
import type { SqliteDriverChoice } from '../audit/sqlite/sqlite-db.js';
import type { EventPayloads } from '../audit/payload-schemas.js';
import type { ApproverCredential } from '../passkeys/approvers-file.js';
import { packageVersion } from '../package-root.js';

/** Where `approvers` records enrolments: the SQLite audit log the server writes (with its writer key, if any). */
export interface ApproverAudit {
  path: string;
  sqliteDriver?: SqliteDriverChoice | undefined;
  writerKey?: Buffer | (() => Buffer | undefined);
}

export type ApproverChange =
  | { type: 'approver_enrolled'; credential: ApproverCredential }
  | { type: 'approver_removed'; credential: ApproverCredential; at: Date };

/**
 * Appends one enrolment or removal to the audit log, in its own `cli` session, before approvers.json changes: a
 * passkey `audit verify` does not find enrolled in the log does not approve there. Throws when the log refuses it.
 */
export function recordApproverEvent(audit: ApproverAudit, change: ApproverChange): void {
  const store = openAuditStore({
    path: audit.path,
    ...(audit.sqliteDriver === undefined ? {} : { sqliteDriver: audit.sqliteDriver }),
    ...(audit.writerKey === undefined ? {} : { writerKey: audit.writerKey }),
  });
  try {
    const session = store.startSession({
      transport: 'cli',
      server_version: packageVersion(),
      client: { name: 'skills-mcp approvers' },
    }).sessionId;
    const c = change.credential;
    const who = {
      credential_id: c.id,
      public_key: c.public_key,
      name: c.label,
      ...(c.subject === undefined ? {} : { subject: c.subject }),
    };
    if (change.type === 'approver_enrolled') {
      const payload: EventPayloads['approver_enrolled'] = { ...who, enrolled_at: c.enrolled_at };
      store.append({ type: 'approver_enrolled', sessionId: session, payload });
    } else {
      const payload: EventPayloads['approver_removed'] = { ...who, removed_at: change.at.toISOString() };
      store.append({ type: 'approver_removed', sessionId: session, payload });
    }
    store.endSession(session, 'client_closed');
  } finally {
    store.close();
  }
}
