import type pg from 'pg';
import { createProjector } from '../create-projector.js';
import { migrate } from '../migrate.js';
import { parseEventRow } from '../parse-event-row.js';
import { getCall, listCalls } from '../query-calls.js';
import { openSqlite } from '../sqlite/open-sqlite.js';
import type { AuditEvent, CallDetail, CallRow, ListCallsFilter } from '../types.js';
import { pgFailure } from './pg-failure.js';
import { PG_SCHEMA } from './pg-schema.js';
import { asRow } from './read-pg-events.js';

const COLUMNS =
  'event_id::text AS event_id, ts::text AS ts, session_id, call_id, type, payload, prev_hash, hash';
const RECENT = `SELECT call_id FROM ${PG_SCHEMA}.audit_events
  WHERE type = 'tool_call_requested' AND ($2::text IS NULL OR session_id = $2) ORDER BY event_id DESC LIMIT $1`;
const OF_CALLS = `SELECT ${COLUMNS} FROM ${PG_SCHEMA}.audit_events
  WHERE call_id = ANY($1::text[])
     OR (type = 'session_started' AND session_id IN
          (SELECT session_id FROM ${PG_SCHEMA}.audit_events WHERE call_id = ANY($1::text[])))
  ORDER BY event_id`;

/** How many calls the console's listing reads at most. */
const MAX_CALLS = 500;

/**
 * The summary rows of some calls of a PostgreSQL log (what the SQLite store keeps in its `calls`, `approvals` and
 * `artifacts` tables): their events are read and folded, in memory, by the projector the SQLite store uses.
 */
export async function projectPgCalls(
  pool: pg.Pool,
  filter: ListCallsFilter & { callId?: string },
): Promise<{ calls: CallRow[]; detail: (callId: string) => CallDetail | undefined }> {
  let events: AuditEvent[];
  try {
    const ids =
      filter.callId !== undefined
        ? [filter.callId]
        : (
            await pool.query<{ call_id: string }>(RECENT, [
              Math.min(MAX_CALLS, filter.limit ?? MAX_CALLS),
              filter.sessionId ?? null,
            ])
          ).rows.map((r) => r.call_id);
    const rows = (await pool.query<Record<string, unknown>>(OF_CALLS, [ids])).rows;
    events = rows.map((r) => parseEventRow(asRow(r)));
  } catch (err) {
    throw pgFailure('read the calls', err);
  }
  const mem = openSqlite(':memory:').db;
  try {
    migrate(mem, () => 0);
    mem.pragma('foreign_keys = OFF');
    const project = createProjector(mem);
    mem.transaction(() => events.forEach(project))();
    const calls = listCalls(mem, filter);
    const details = new Map<string, CallDetail>();
    for (const c of calls) {
      const d = getCall(mem, c.callId);
      if (d !== undefined)
        details.set(c.callId, { ...d, events: events.filter((e) => e.callId === c.callId) });
    }
    return { calls, detail: (id) => details.get(id) };
  } finally {
    mem.close();
  }
}
