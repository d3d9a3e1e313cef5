import Database from 'better-sqlite3';
import { mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { MIGRATIONS, SCHEMA_VERSION, openAuditStore } from '../../src/audit/index.js';
import { auditCli } from './helpers/anchored-server.js';
import { gatedCall, startSession } from './helpers/sample-events.js';
import { tempDir } from './helpers/temp-dir.js';

const TABLES = ['sessions', 'events', 'calls', 'approvals', 'artifacts'];
const enrolled = {
  credential_id: 'Y3JlZGVudGlhbA',
  public_key: 'cHVibGljLWtleQ',
  name: 'alice',
  enrolled_at: '2026-01-01T00:00:00.000Z',
};

/**
 * A log as the schema before passkey enrolment events made it (migrations 1-4 only), holding the events of a
 * session with one gated call, copied row by row from a log the store wrote.
 */
function oldLog(path: string, scratch: string): void {
  const store = openAuditStore({ path: scratch });
  const s = startSession(store);
  gatedCall(store, s);
  store.endSession(s, 'client_closed');
  store.close();
  mkdirSync(dirname(path), { recursive: true });
  const db = new Database(path);
  for (const m of MIGRATIONS.filter((m) => m.version <= 4)) {
    db.exec(m.sql);
    db.prepare('INSERT INTO schema_migrations (version, name, applied_ts) VALUES (?, ?, ?)').run(
      m.version,
      m.name,
      Date.now(),
    );
  }
  db.pragma('user_version = 4');
  db.exec(`ATTACH DATABASE '${scratch}' AS fresh`);
  for (const t of TABLES) db.exec(`INSERT INTO main.${t} SELECT * FROM fresh.${t}`);
  db.exec('DETACH DATABASE fresh');
  db.close();
}

describe('migration 5: passkey enrolment events', () => {
  const cleanups: (() => void)[] = [];
  afterEach(() => {
    for (const c of cleanups.splice(0)) c();
  });

  it('upgrades a log of the previous schema: its chain and guards still verify, and it takes enrolments', () => {
    const t = tempDir();
    cleanups.push(t.cleanup);
    oldLog(t.dbPath, join(t.dir, 'scratch.db'));
    const before = new Database(t.dbPath);
    const events = (before.prepare('SELECT count(*) AS n FROM events').get() as { n: number }).n;
    // The old schema refuses the new type: this is what the migration changes.
    expect(() =>
      before
        .prepare(
          `INSERT INTO events (event_id, ts, session_id, type, payload, prev_hash, hash)
           SELECT ?, 0, session_id, 'approver_enrolled', '{}', hash, hash FROM events ORDER BY event_id DESC LIMIT 1`,
        )
        .run(events + 1),
    ).toThrow(/CHECK constraint failed/);
    before.close();
    expect(auditCli(t.dbPath, 'verify').code).toBe(0);

    const store = openAuditStore({ path: t.dbPath });
    const session = store.startSession({ transport: 'cli', server_version: '0.0.0' }).sessionId;
    const e = store.append({ type: 'approver_enrolled', sessionId: session, payload: enrolled });
    store.endSession(session, 'client_closed');
    store.close();
    expect(e.eventId).toBe(events + 2);

    const after = new Database(t.dbPath, { readonly: true });
    expect(after.pragma('user_version', { simple: true })).toBe(SCHEMA_VERSION);
    after.close();
    const v = auditCli(t.dbPath, 'verify');
    expect(v.code, v.out + v.err).toBe(0);
    expect(v.out).toContain(`chain: ok, ${events + 3} events`);
    expect(v.out).toContain('database: ok, its tables, indexes and guard triggers agree');
    expect(v.out).toContain(
      'passkeys: ok, 0 passkey approvals checked against 1 passkey enrolled in the log',
    );
  });

  it('builds a new log with the same guard triggers as an upgraded one', () => {
    const t = tempDir();
    cleanups.push(t.cleanup);
    oldLog(join(t.dir, 'old.db'), join(t.dir, 'scratch.db'));
    openAuditStore({ path: join(t.dir, 'old.db') }).close();
    openAuditStore({ path: join(t.dir, 'new.db') }).close();
    const triggers = (p: string) => {
      const db = new Database(p, { readonly: true });
      const rows = db
        .prepare("SELECT name, sql FROM sqlite_master WHERE type = 'trigger' ORDER BY name")
        .all();
      const table = db.prepare("SELECT sql FROM sqlite_master WHERE name = 'events'").get();
      db.close();
      return { rows, table };
    };
    expect(triggers(join(t.dir, 'old.db'))).toEqual(triggers(join(t.dir, 'new.db')));
  });
});
