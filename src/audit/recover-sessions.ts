import type { SqliteDb } from './sqlite/sqlite-db.js';
import { closeSession } from './close-session.js';
import type { PendingEvent } from './check-event-input.js';
import type { SessionOwner } from './is-owner-alive.js';
import type { AuditEvent, RecoveryReport } from './types.js';

/**
 * Crash recovery, inside the caller's IMMEDIATE transaction: every open session whose owner process is gone
 * gets its pending approvals denied (`server_restart`), its open calls `tool_call_interrupted`, and
 * `session_ended` (`server_restart`). Sessions of live owners (another server sharing this DB) are left alone.
 */
export function recoverSessions(
  db: SqliteDb,
  write: (event: PendingEvent) => AuditEvent,
  isAlive: (owner: SessionOwner) => boolean,
): Omit<RecoveryReport, 'chain'> {
  const report: Omit<RecoveryReport, 'chain'> = {
    interruptedCalls: [],
    deniedApprovals: [],
    closedSessions: [],
    liveSessions: [],
  };
  const open = db
    .prepare(
      'SELECT session_id, owner_pid, owner_host FROM sessions WHERE ended_event_id IS NULL ORDER BY started_event_id',
    )
    .all() as { session_id: string; owner_pid: number; owner_host: string }[];
  for (const s of open) {
    if (isAlive({ pid: s.owner_pid, host: s.owner_host })) {
      report.liveSessions.push(s.session_id);
      continue;
    }
    closeSession(db, write, s.session_id, 'server_restart', 'server_restart', report);
    report.closedSessions.push(s.session_id);
  }
  return report;
}
