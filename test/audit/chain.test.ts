import Database from 'better-sqlite3';
import { createHash } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { canonicalJson } from '../../src/canonical-json.js';
import { GENESIS_HASH, SCHEMA_VERSION, openAuditStore, type AuditStore } from '../../src/audit/index.js';
import { gatedCall, startSession } from './helpers/sample-events.js';
import { tempDir } from './helpers/temp-dir.js';

describe('audit hash chain', () => {
  let t: ReturnType<typeof tempDir>;
  let store: AuditStore;
  beforeEach(() => {
    t = tempDir();
    store = openAuditStore({ path: t.dbPath });
    const s = startSession(store);
    for (let i = 0; i < 5; i++) gatedCall(store, s, undefined, 1);
    store.endSession(s, 'client_closed');
  });
  afterEach(() => {
    store.close();
    t.cleanup();
  });

  /** A second connection, as an attacker or a careless tool would use. */
  const raw = (): Database.Database => new Database(t.dbPath);

  it('opens with WAL, synchronous=FULL, foreign keys on and a 512 KiB page cache', () => {
    expect(store.settings()).toMatchObject({
      journalMode: 'wal',
      synchronous: 'full',
      foreignKeys: true,
      cacheKiB: 512,
      schemaVersion: SCHEMA_VERSION,
    });
  });

  it('links every event to the previous one and verifies', () => {
    const events = [...store.exportEvents()];
    expect(events.map((e) => e.event_id)).toEqual(events.map((_, i) => i + 1));
    expect(events[0]!.prev_hash).toBe(GENESIS_HASH);
    for (let i = 1; i < events.length; i++) expect(events[i]!.prev_hash).toBe(events[i - 1]!.hash);
    expect(store.verify()).toEqual({ ok: true, events: events.length, head: events.at(-1)!.hash });
  });

  it('hashes sha256(prev_hash + "\\n" + canonical JSON of the event fields), as documented', () => {
    for (const e of store.exportEvents()) {
      const { event_id, ts, session_id, call_id, type, payload } = e;
      const body = canonicalJson({ event_id, ts, session_id, call_id, type, payload });
      expect(createHash('sha256').update(`${e.prev_hash}\n${body}`).digest('hex')).toBe(e.hash);
    }
  });

  it('refuses UPDATE and DELETE on events', () => {
    const db = raw();
    try {
      expect(() => db.prepare("UPDATE events SET payload = '{}' WHERE event_id = 3").run()).toThrow(
        /append-only/,
      );
      expect(() => db.prepare('DELETE FROM events WHERE event_id = 3').run()).toThrow(/append-only/);
      expect(() => db.prepare('DELETE FROM events').run()).toThrow(/append-only/);
    } finally {
      db.close();
    }
    expect(store.verify().ok).toBe(true);
  });

  it('refuses an inserted row that does not extend the chain', () => {
    const db = raw();
    try {
      const last = db.prepare('SELECT * FROM events ORDER BY event_id DESC LIMIT 1').get() as Record<
        string,
        unknown
      >;
      const forged = { ...last, event_id: (last.event_id as number) + 1, prev_hash: GENESIS_HASH };
      expect(() =>
        db
          .prepare(
            'INSERT INTO events VALUES (@event_id, @ts, @session_id, @call_id, @type, @payload, @prev_hash, @hash)',
          )
          .run(forged),
      ).toThrow(/does not extend the hash chain/);
    } finally {
      db.close();
    }
  });

  it('names the edited row when a payload is changed behind the triggers', () => {
    const db = raw();
    try {
      db.exec('DROP TRIGGER events_no_update');
      // The approval of the second call: turn "approved" into "denied".
      const row = db
        .prepare(
          "SELECT event_id, payload FROM events WHERE type = 'approval_decided' ORDER BY event_id LIMIT 1 OFFSET 1",
        )
        .get() as { event_id: number; payload: string };
      expect(row.event_id).toBe(11);
      const edited = row.payload.replace('"decision":"approved"', '"decision":"denied"');
      expect(edited).not.toBe(row.payload);
      db.prepare('UPDATE events SET payload = ? WHERE event_id = 11').run(edited);
    } finally {
      db.close();
    }
    expect(store.verify()).toMatchObject({ ok: false, badEventId: 11, reason: 'hash_mismatch', events: 10 });
  });

  it('names the row after a deleted one', () => {
    const db = raw();
    try {
      db.exec('DROP TRIGGER events_no_delete');
      db.pragma('foreign_keys = OFF');
      db.prepare('DELETE FROM events WHERE event_id = 4').run();
    } finally {
      db.close();
    }
    expect(store.verify()).toMatchObject({ ok: false, badEventId: 5, reason: 'event_id_gap' });
  });

  it('names a row whose hash was recomputed but whose link was not', () => {
    const db = raw();
    try {
      db.exec('DROP TRIGGER events_no_update');
      db.prepare('UPDATE events SET prev_hash = ? WHERE event_id = 6').run('f'.repeat(64));
    } finally {
      db.close();
    }
    expect(store.verify()).toMatchObject({ ok: false, badEventId: 6, reason: 'prev_hash_mismatch' });
  });

  it('names a row whose payload is no longer canonical JSON', () => {
    const db = raw();
    try {
      db.exec('DROP TRIGGER events_no_update');
      const row = db.prepare('SELECT payload FROM events WHERE event_id = 2').get() as { payload: string };
      db.prepare('UPDATE events SET payload = ? WHERE event_id = 2').run(
        JSON.stringify(JSON.parse(row.payload), null, 1),
      );
    } finally {
      db.close();
    }
    expect(store.verify()).toMatchObject({ ok: false, badEventId: 2, reason: 'not_canonical' });
  });

  it('reports the first bad row when several are bad', () => {
    const db = raw();
    try {
      db.exec('DROP TRIGGER events_no_update');
      db.prepare('UPDATE events SET ts = ts + 1 WHERE event_id IN (7, 12)').run();
    } finally {
      db.close();
    }
    expect(store.verify()).toMatchObject({ ok: false, badEventId: 7, reason: 'hash_mismatch' });
  });
});
