import type { SqliteDb } from './sqlite/sqlite-db.js';
import type { PendingEvent } from './check-event-input.js';
import type { AuditEvent } from './types.js';

type Outcome = { ok: true; event: AuditEvent } | { ok: false; error: unknown };

export interface GroupCommit {
  /** Queues an event; resolves once the transaction holding it has committed (durable), rejects if refused. */
  append: (event: PendingEvent) => Promise<AuditEvent>;
  /** Commits whatever is queued, now. */
  flush: () => void;
}

/**
 * Group commit: events queued in the same turn of the event loop are written in one IMMEDIATE transaction and
 * share one fsync. Each event runs in its own savepoint, so a refused event fails alone. Write-ahead stays
 * honest: no caller's promise settles before its event is durable, so no caller goes on early.
 */
export function createGroupCommit(
  db: SqliteDb,
  write: (event: PendingEvent) => AuditEvent,
  commit: <T>(fn: () => T) => T,
): GroupCommit {
  let queue: { event: PendingEvent; resolve: (e: AuditEvent) => void; reject: (e: unknown) => void }[] = [];
  let scheduled = false;
  const one = db.transaction(write); // nested inside `all`: a SAVEPOINT
  const all = db.transaction((events: PendingEvent[]): Outcome[] =>
    events.map((event) => {
      try {
        return { ok: true, event: one(event) };
      } catch (error) {
        return { ok: false, error };
      }
    }),
  );

  const flush = (): void => {
    scheduled = false;
    const batch = queue;
    queue = [];
    if (batch.length === 0) return;
    let outcomes: Outcome[];
    try {
      outcomes = commit(() => all.immediate(batch.map((b) => b.event)));
    } catch (error) {
      for (const b of batch) b.reject(error);
      return;
    }
    outcomes.forEach((o, i) => (o.ok ? batch[i]!.resolve(o.event) : batch[i]!.reject(o.error)));
  };

  return {
    append: (event) =>
      new Promise((resolve, reject) => {
        queue.push({ event, resolve, reject });
        if (!scheduled) {
          scheduled = true;
          setImmediate(flush);
        }
      }),
    flush,
  };
}
