import type { SqliteDb } from './sqlite/sqlite-db.js';
import { SkillsError } from '../errors.js';
import { newestCheckpoint, type Checkpoint } from './checkpoint.js';

/**
 * The last event of the longest prefix of the (remaining) chain that holds only whole sessions ended before
 * `endedBefore`: the walk stops at the first event of a session that is open or ended since, and the prefix ends
 * only where every session it touches has ended, so no session is ever split. 0 (or the newest checkpoint's event)
 * when there is nothing to archive.
 */
export function archivableThrough(db: SqliteDb, endedBefore: number): number {
  const from = newestCheckpoint(db)?.through ?? 0;
  const ends = new Map<string, { eventId: number; ts: number }>();
  const ended = db
    .prepare("SELECT session_id, event_id, ts FROM events WHERE type = 'session_ended' AND event_id > ?")
    .all(from) as { session_id: string; event_id: number; ts: number }[];
  for (const e of ended) ends.set(e.session_id, { eventId: e.event_id, ts: e.ts });
  let cut = from;
  let lastEnd = from;
  const rows = db.prepare('SELECT event_id, session_id FROM events WHERE event_id > ? ORDER BY event_id');
  for (const row of rows.iterate(from) as IterableIterator<{ event_id: number; session_id: string }>) {
    const end = ends.get(row.session_id);
    if (end === undefined || end.ts >= endedBefore) break;
    lastEnd = Math.max(lastEnd, end.eventId);
    if (lastEnd === row.event_id) cut = row.event_id;
  }
  return cut;
}

/** What a prune removed. */
export interface PruneCounts {
  events: number;
  sessions: number;
  calls: number;
  marks: number;
}

/**
 * Records `checkpoint` and deletes what it covers: the events up to it, the summary rows of their sessions (which end
 * inside it) and the writer marks wholly inside it. Run it inside the write lock (one IMMEDIATE transaction), so all
 * of it commits or none. The triggers allow deleting events and marks only up to the newest checkpoint.
 */
export function pruneThrough(db: SqliteDb, checkpoint: Checkpoint): PruneCounts {
  const previous = newestCheckpoint(db);
  if (previous !== undefined && previous.seq + 1 !== checkpoint.seq)
    throw new SkillsError('AUDIT_FAILED', 'another checkpoint was recorded meanwhile: archive again');
  db.prepare(
    `INSERT INTO checkpoints (seq, through_event, through_hash, first_hash, archive_sha256, ts, mac)
     VALUES (?, ?, ?, ?, ?, ?, ?)`,
  ).run(
    checkpoint.seq,
    checkpoint.through,
    checkpoint.hash,
    checkpoint.first,
    checkpoint.archiveSha256,
    checkpoint.ts,
    checkpoint.mac,
  );
  const n = checkpoint.through;
  const inPruned = 'session_id IN (SELECT session_id FROM events WHERE event_id <= ?)';
  const open = db.prepare(
    `SELECT COUNT(*) AS n FROM sessions WHERE ${inPruned} AND (ended_event_id IS NULL OR ended_event_id > ?)`,
  );
  if ((open.get(n, n) as { n: number }).n > 0)
    throw new SkillsError('AUDIT_FAILED', `a session of events up to ${n} goes on after it: nothing pruned`);
  const ofCalls = `call_id IN (SELECT call_id FROM calls WHERE ${inPruned})`;
  db.prepare(`DELETE FROM artifacts WHERE ${ofCalls}`).run(n);
  db.prepare(`DELETE FROM approvals WHERE ${ofCalls}`).run(n);
  const calls = db.prepare(`DELETE FROM calls WHERE ${inPruned}`).run(n).changes;
  const sessions = db.prepare(`DELETE FROM sessions WHERE ${inPruned}`).run(n).changes;
  const marks = db.prepare('DELETE FROM writer_marks WHERE last_event <= ?').run(n).changes;
  const events = db.prepare('DELETE FROM events WHERE event_id <= ?').run(n).changes;
  return { events: Number(events), sessions: Number(sessions), calls: Number(calls), marks: Number(marks) };
}
