import Database from 'better-sqlite3';
import { join } from 'node:path';
import { tamper } from '../../audit/helpers/anchored-server.js';

/** A consistent copy of the live log (SQLite's own backup), in a folder of its own. */
export function copyOf(auditPath: string, dir: string, name: string): string {
  const to = join(dir, name);
  const db = new Database(auditPath, { readonly: true });
  db.exec(`VACUUM INTO '${to}'`);
  db.close();
  return to;
}

/** Rewrites the payload of the event at `eventId` in the copy at `path` (re-hashing the chain or not). */
export function editPayload(
  path: string,
  eventId: number,
  edit: (p: Record<string, unknown>) => void,
  rehash: boolean,
): void {
  tamper(path, (db) => {
    const row = db.prepare('SELECT payload FROM events WHERE event_id = ?').get(eventId) as {
      payload: string;
    };
    const payload = JSON.parse(row.payload) as Record<string, unknown>;
    edit(payload);
    db.prepare('UPDATE events SET payload = ? WHERE event_id = ?').run(JSON.stringify(payload), eventId);
    return rehash ? eventId : undefined;
  });
}

/** Rewrites the passkey evidence of the decision at `eventId` in the copy at `path` (re-hashing the chain or not). */
export function editEvidence(
  path: string,
  eventId: number,
  edit: (p: Record<string, unknown>) => void,
  rehash: boolean,
): void {
  editPayload(path, eventId, (p) => edit(p.passkey as Record<string, unknown>), rehash);
}
