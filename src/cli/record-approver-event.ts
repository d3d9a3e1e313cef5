import { openAuditStore } from '../audit/open-audit-store.js';
import type { SqliteDriverChoice } from '../audit/sqlite/sqlite-db.js';
import {
  approverChangeEvent,
  approverSessionPayload,
  type ApproverChange,
} from '../passkeys/approver-change-event.js';

/** Where `approvers` records enrolments: the SQLite audit log the server writes (with its writer key, if any). */
export interface ApproverAudit {
  path: string;
  sqliteDriver?: SqliteDriverChoice | undefined;
  writerKey?: Buffer | (() => Buffer | undefined);
}

export type { ApproverChange };

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
    const session = store.startSession(approverSessionPayload()).sessionId;
    const event = approverChangeEvent(change);
    if (event.type === 'approver_enrolled')
      store.append({ type: 'approver_enrolled', sessionId: session, payload: event.payload });
    else store.append({ type: 'approver_removed', sessionId: session, payload: event.payload });
    store.endSession(session, 'client_closed');
  } finally {
    store.close();
  }
}
