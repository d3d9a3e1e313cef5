import type { EventPayloads } from '../audit/payload-schemas.js';
import { openAuditStore } from '../audit/open-audit-store.js';
import type { SqliteDriverChoice } from '../audit/sqlite/sqlite-db.js';
import { packageVersion } from '../package-root.js';

/** Where `sources update` records what it fetched: the SQLite audit log the server writes (with its writer key). */
export interface SourceAudit {
  path: string;
  sqliteDriver?: SqliteDriverChoice | undefined;
  writerKey?: Buffer | (() => Buffer | undefined);
}

/**
 * Appends one `source_updated` event, in its own `cli` session, before the new checkout takes the old one's place, so
 * no commit is put in place that the log does not name. Throws when the log refuses it (the old checkout stays).
 */
export function recordSourceUpdate(audit: SourceAudit, payload: EventPayloads['source_updated']): void {
  const store = openAuditStore({
    path: audit.path,
    ...(audit.sqliteDriver === undefined ? {} : { sqliteDriver: audit.sqliteDriver }),
    ...(audit.writerKey === undefined ? {} : { writerKey: audit.writerKey }),
  });
  try {
    const session = store.startSession({
      transport: 'cli',
      server_version: packageVersion(),
      client: { name: 'skills-mcp sources update' },
    }).sessionId;
    store.append({ type: 'source_updated', sessionId: session, payload });
    store.endSession(session, 'client_closed');
  } finally {
    store.close();
  }
}
