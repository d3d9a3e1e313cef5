import { createProjector } from './create-projector.js';
import { migrate } from './migrate.js';
import { parseEventRow } from './parse-event-row.js';
import { snapshotProjections } from './rebuild-projections.js';
import { openSqlite } from './sqlite/open-sqlite.js';
import type { SqliteDb } from './sqlite/sqlite-db.js';
import type { ProjectionSnapshot } from './types.js';

/** One row of a summary table that is not what the events say. */
export interface ProjectionDifference {
  table: keyof ProjectionSnapshot;
  /** The row's key, e.g. a call id (`call_id/path` for artifacts). */
  key: string;
  /** The first column that differs; absent when the row exists on one side only. */
  column?: string;
  /** What the table holds (undefined: no such row). */
  stored: unknown;
  /** What replaying the events gives (undefined: no such row). */
  rebuilt: unknown;
}

const KEYS: Record<keyof ProjectionSnapshot, readonly string[]> = {
  sessions: ['session_id'],
  calls: ['call_id'],
  approvals: ['call_id'],
  artifacts: ['call_id', 'path'],
};
const PAGE = 1000;

/**
 * Replays every event into fresh summary tables (in memory, through the projector the appends use) and compares
 * them with the stored `sessions`, `calls`, `approvals` and `artifacts`. Returns up to `limit` differences: an edit
 * of a summary table, which the chain cannot see, shows up here. Reads only.
 */
export function compareProjections(db: SqliteDb, limit = 50): ProjectionDifference[] {
  const mem = openSqlite(':memory:').db;
  try {
    migrate(mem, () => 0);
    const project = createProjector(mem);
    const page = db.prepare('SELECT * FROM events WHERE event_id > ? ORDER BY event_id LIMIT ?');
    mem.transaction(() => {
      for (let after = 0; ;) {
        const rows = page.all(after, PAGE);
        for (const row of rows) {
          const e = parseEventRow(row);
          project(e);
          after = e.eventId;
        }
        if (rows.length < PAGE) return;
      }
    })();
    return diff(snapshotProjections(db), snapshotProjections(mem), limit);
  } finally {
    mem.close();
  }
}

function diff(
  stored: ProjectionSnapshot,
  rebuilt: ProjectionSnapshot,
  limit: number,
): ProjectionDifference[] {
  const out: ProjectionDifference[] = [];
  for (const table of Object.keys(KEYS) as (keyof ProjectionSnapshot)[]) {
    const keyOf = (r: Record<string, unknown>) => KEYS[table].map((k) => String(r[k])).join('/');
    const mine = new Map<string, Record<string, unknown>>();
    const twice = new Map<string, number>();
    for (const r of stored[table]) {
      const key = keyOf(r);
      if (mine.has(key)) twice.set(key, (twice.get(key) ?? 1) + 1);
      else mine.set(key, r);
    }
    const theirs = new Map(rebuilt[table].map((r) => [keyOf(r), r]));
    for (const key of new Set([...mine.keys(), ...theirs.keys()])) {
      if (out.length >= limit) return out;
      const a = mine.get(key);
      const b = theirs.get(key);
      // A table rebuilt without its key can hold two rows for one call: a lookup reads one, a scan another.
      const rows = twice.get(key);
      if (rows !== undefined) {
        out.push({ table, key, stored: `${rows} rows with this key`, rebuilt: b });
        continue;
      }
      if (a === undefined || b === undefined) {
        out.push({ table, key, stored: a, rebuilt: b });
        continue;
      }
      const column = Object.keys(b).find((c) => a[c] !== b[c]);
      if (column !== undefined) out.push({ table, key, column, stored: a[column], rebuilt: b[column] });
    }
  }
  return out;
}
