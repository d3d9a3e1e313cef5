import {
  createAuditDb,
  startTestPostgres,
  type TestAuditDb,
  type TestPostgres,
} from '../../helpers/postgres.js';
import { runCli, type CliRun } from '../../helpers/run-cli.js';
import { pendingLinks } from '../../console/helpers/console-server.js';
import { rawRequest } from '../../console/helpers/raw-request.js';
import { waitFor } from '../../helpers/wait-for.js';

/** One row of the shared audit log, read as the PostgreSQL superuser. */
export interface Row {
  event_id: string;
  type: string;
  call_id: string | null;
  payload: string;
}

export interface SharedAudit {
  pg: TestPostgres;
  db: TestAuditDb;
  /** What `startTeamStack` needs to give every replica this log. */
  stack: { audit: string; env: Record<string, string> };
  /** Rows matching `where` (SQL on audit_events, `$1`… bound to `params`), in chain order. */
  rows(where?: string, params?: unknown[]): Promise<Row[]>;
  /** `skills-mcp audit verify --audit postgres://…` as the server's role. */
  verify(): CliRun;
  cleanup(): void;
}

/** A PostgreSQL server this test started, with a migrated audit database and its INSERT-only writer role. */
export async function startSharedAudit(): Promise<SharedAudit> {
  const pg = startTestPostgres();
  try {
    const db = await createAuditDb(pg);
    const env = { PGPASSWORD: db.writer.password };
    return {
      pg,
      db,
      stack: { audit: db.writerUrl, env },
      rows: (where = 'true', params: unknown[] = []) =>
        pg.superuser(db.database, async (c) => {
          const r = await c.query<Row>(
            `SELECT event_id, type, call_id, payload FROM skills_mcp.audit_events WHERE ${where} ORDER BY event_id`,
            params,
          );
          return r.rows;
        }),
      verify: () => runCli(['audit', 'verify', '--audit', db.writerUrl], { env }),
      cleanup: () => pg.cleanup(),
    };
  } catch (e) {
    pg.cleanup();
    throw e;
  }
}

/** The console page of `callId`'s approval, once the console at `base` lists it (from the views replicas share). */
export const approvalLink = (base: string, callId: string, ms = 15_000): Promise<string> =>
  waitFor(
    async () => {
      for (const l of await pendingLinks(base)) {
        if ((await rawRequest(l)).body.includes(`calls/${callId}`)) return l;
      }
      return undefined;
    },
    ms,
    `the approval of ${callId} on the console`,
  );
