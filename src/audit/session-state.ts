import type { SqliteDb } from './sqlite/sqlite-db.js';
import type { EventType } from './event-types.js';
import { parseEventRow } from './parse-event-row.js';
import { countsAsDenial } from '../approvals/approval-decision.js';
import type { AuditEvent, SessionRecord } from './types.js';

/** A session's events of the given types (all types when omitted), in commit order. */
export function sessionEvents<T extends EventType>(
  db: SqliteDb,
  sessionId: string,
  types?: readonly T[],
): AuditEvent<T>[] {
  const rows =
    types === undefined
      ? db.prepare('SELECT * FROM events WHERE session_id = ? ORDER BY event_id').all(sessionId)
      : db
          .prepare(
            `SELECT * FROM events WHERE session_id = ? AND type IN (${types.map(() => '?').join(', ') || 'NULL'})
             ORDER BY event_id`,
          )
          .all(sessionId, ...types);
  return rows.map(parseEventRow) as AuditEvent<T>[];
}

/**
 * The gate's view of a session, rebuilt from events (the source of truth, not the projections): grants,
 * denial counts per approval key, loop-guarded keys, the aborted flag, and whether the session is open.
 */
export function sessionState(db: SqliteDb, sessionId: string): SessionRecord {
  return foldSessionRecord(sessionId, sessionEvents(db, sessionId, SESSION_STATE_EVENTS));
}

/** The event types {@link foldSessionRecord} reads. */
export const SESSION_STATE_EVENTS = [
  'session_started',
  'approval_decided',
  'loop_guard_tripped',
  'session_aborted',
  'session_ended',
] as const;

/** The gate's view of a session from its events (of {@link SESSION_STATE_EVENTS}), in commit order. */
export function foldSessionRecord(
  sessionId: string,
  events: readonly AuditEvent<(typeof SESSION_STATE_EVENTS)[number]>[],
): SessionRecord {
  const grants = new Set<string>();
  const loopGuarded = new Set<string>();
  const denials: Record<string, number> = {};
  let exists = false;
  let ended = false;
  let aborted = false;
  for (const e of events) {
    switch (e.type) {
      case 'session_started':
        exists = true;
        break;
      case 'session_ended':
        ended = true;
        break;
      case 'session_aborted':
        aborted = true;
        break;
      case 'loop_guard_tripped':
        loopGuarded.add(e.payload.approval_key);
        break;
      case 'approval_decided': {
        const { approval_key: key, decision, reason } = e.payload;
        if (decision === 'approved_for_session') grants.add(key);
        if (countsAsDenial({ decision, reason })) denials[key] = (denials[key] ?? 0) + 1;
        break;
      }
    }
  }
  return {
    sessionId,
    exists,
    open: exists && !ended,
    aborted,
    grants: [...grants].sort(),
    denials,
    loopGuarded: [...loopGuarded].sort(),
  };
}
