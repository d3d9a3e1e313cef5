import { existsSync } from 'node:fs';
import { hostname } from 'node:os';
import { isOwnerAlive } from './is-owner-alive.js';
import { openSqlite } from './sqlite/open-sqlite.js';
import type { SqliteDriverChoice } from './sqlite/sqlite-db.js';

/**
 * The bundle hashes that calls of live sessions refer to (pending approvals and session grants included), read
 * from the audit log at `path` without writing to it. A session whose server is gone does not count. No log yet:
 * nothing is referenced.
 */
export function referencedBundles(path: string, driver: SqliteDriverChoice = 'auto'): Set<string> {
  const found = new Set<string>();
  if (!existsSync(path)) return found;
  const { db } = openSqlite(path, { readOnly: true, driver });
  try {
    db.pragma('query_only = ON');
    const rows = db
      .prepare(
        `SELECT DISTINCT c.bundle_sha256 AS sha, s.owner_pid AS pid, s.owner_host AS host
           FROM sessions s JOIN calls c ON c.session_id = s.session_id
          WHERE s.ended_event_id IS NULL AND c.bundle_sha256 IS NOT NULL`,
      )
      .all() as { sha: string; pid: number; host: string }[];
    const self = { pid: process.pid, host: hostname() };
    for (const r of rows) if (isOwnerAlive({ pid: r.pid, host: r.host }, self)) found.add(r.sha);
  } finally {
    db.close();
  }
  return found;
}
