import type { SqliteDb } from './sqlite/sqlite-db.js';
import { createProjector } from './create-projector.js';
import { parseEventRow } from './parse-event-row.js';
import type { ProjectionSnapshot } from './types.js';

const PAGE = 1000;

/**
 * Clears `sessions`, `calls`, `approvals` and `artifacts` and replays every event through the same projector the
 * appends use. Runs in one IMMEDIATE transaction (foreign keys are deferred until commit): all or nothing.
 */
export function rebuildProjections(db: SqliteDb): number {
  const project = createProjector(db);
  const page = db.prepare('SELECT * FROM events WHERE event_id > ? ORDER BY event_id LIMIT ?');
  return db
    .transaction(() => {
      db.exec('DELETE FROM artifacts; DELETE FROM approvals; DELETE FROM calls; DELETE FROM sessions;');
      let after = 0;
      let count = 0;
      for (;;) {
        const rows = page.all(after, PAGE);
        for (const row of rows) {
          const e = parseEventRow(row);
          project(e);
          after = e.eventId;
          count++;
        }
        if (rows.length < PAGE) return count;
      }
    })
    .immediate();
}

/** Every projection row, ordered by key: for comparing incremental projections with rebuilt ones. */
export function snapshotProjections(db: SqliteDb): ProjectionSnapshot {
  const all = (sql: string) => db.prepare(sql).all() as Record<string, unknown>[];
  return db.transaction(() => ({
    sessions: all('SELECT * FROM sessions ORDER BY session_id'),
    calls: all('SELECT * FROM calls ORDER BY call_id'),
    approvals: all('SELECT * FROM approvals ORDER BY call_id'),
    artifacts: all('SELECT * FROM artifacts ORDER BY call_id, path'),
  }))();
}
