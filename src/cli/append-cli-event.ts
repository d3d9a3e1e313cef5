import type { EventPayloads } from '../audit/payload-schemas.js';
import { openAuditStore } from '../audit/open-audit-store.js';
import type { SqliteDriverChoice } from '../audit/sqlite/sqlite-db.js';
import { packageVersion } from '../package-root.js';

/** Where a command records what it changed: the SQLite audit log the server writes (with its writer key, if any). */
export interface CliAudit {
  path: string;
  sqliteDriver?: SqliteDriverChoice | undefined;
  writerKey?: Buffer | (() => Buffer | undefined);
}

type CliEventType = 'approver_enrolled' | 'approver_removed' | 'source_updated';

/** An event a command records: an approver enrolled or removed, a source updated. */
export type CliEvent = { [K in CliEventType]: { type: K; payload: EventPayloads[K] } }[CliEventType];

/**
 * Opens the log, appends `event` in a `cli` session of its own (its client named `client`), ends that session and
 * closes the log. Returns once the event is durable; throws when the log refuses it.
 */
export function appendCliEvent(audit: CliAudit, client: string, event: CliEvent): void {
  const store = openAuditStore({
    path: audit.path,
    ...(audit.sqliteDriver === undefined ? {} : { sqliteDriver: audit.sqliteDriver }),
    ...(audit.writerKey === undefined ? {} : { writerKey: audit.writerKey }),
  });
  try {
    const session = store.startSession({
      transport: 'cli',
      server_version: packageVersion(),
      client: { name: client },
    }).sessionId;
    store.append({ ...event, sessionId: session });
    store.endSession(session, 'client_closed');
  } finally {
    store.close();
  }
}
