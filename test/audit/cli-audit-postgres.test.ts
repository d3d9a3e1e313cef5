import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openPgAuditLog } from '../../src/audit/postgres/open-pg-audit-log.js';
import {
  createAuditDb,
  startTestPostgres,
  type TestAuditDb,
  type TestPostgres,
} from '../helpers/postgres.js';
import { runCli } from '../helpers/run-cli.js';
import { tempDir } from '../helpers/temp-dir.js';
import { finished, requested } from './helpers/sample-events.js';

// `skills-mcp audit verify|export --audit postgres://…` (the built binary) against a real PostgreSQL this file
// starts, and the database superuser tampering with the log the way only a superuser can: triggers off.
let server: TestPostgres;
const dbs: Record<string, TestAuditDb> = {};
const EVENTS = 10;

async function fill(db: TestAuditDb): Promise<void> {
  const log = openPgAuditLog({ url: db.writerUrl, env: { PGPASSWORD: db.writer.password } });
  try {
    for (let i = 0; i < EVENTS / 2; i++)
      await log.appendMany([
        { type: 'tool_call_requested', sessionId: 's1', callId: `c${i}`, payload: requested() },
        { type: 'tool_call_finished', sessionId: 's1', callId: `c${i}`, payload: finished() },
      ]);
  } finally {
    await log.close();
  }
}
const verify = (
  db: TestAuditDb,
  env: Record<string, string> = { PGPASSWORD: db.writer.password },
  url = db.writerUrl,
) => runCli(['audit', 'verify', '--audit', url], { env });
const asSuperuser = (db: TestAuditDb, sql: string) => server.superuser(db.database, (c) => c.query(sql));

beforeAll(async () => {
  server = startTestPostgres();
  for (const name of ['intact', 'updated', 'deleted', 'cut', 'anchored']) {
    dbs[name] = await createAuditDb(server, name);
    await fill(dbs[name]);
  }
}, 60_000);
afterAll(() => server?.cleanup());

describe('skills-mcp audit verify --audit postgres://…', () => {
  it('passes an intact log, names the database without its password, and warns that truncation cannot show', () => {
    const db = dbs.intact!;
    const r = verify(db);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(new RegExp(`^audit log: postgres://intact_writer@/intact\\?host=`));
    expect(r.stdout).toMatch(/\nchain: ok, 10 events, head [0-9a-f]{64}\n/);
    expect(r.stdout).toContain('the newest events could have been deleted without a trace (warning)');
    expect(r.stdout.endsWith('\nok\n')).toBe(true);
    expect(r.stdout + r.stderr).not.toContain(db.writer.password);
  });

  it('prints a password given in the URL as ***, never the password itself', () => {
    const db = dbs.intact!;
    const url = db.writerUrl.replace('intact_writer@', `intact_writer:${db.writer.password}@`);
    const r = verify(db, {}, url);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('audit log: postgres://intact_writer:***@/intact?host=');
    expect(r.stdout + r.stderr).not.toContain(db.writer.password);
  });

  it('detects a row the superuser changed with the triggers bypassed, and names it', async () => {
    const db = dbs.updated!;
    await asSuperuser(
      db,
      `SET session_replication_role = replica;
       UPDATE skills_mcp.audit_events SET payload = replace(payload, '"exit_code":0', '"exit_code":1') WHERE event_id = 4`,
    );
    const r = verify(db);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(
      'chain: BROKEN at event 4 (hash_mismatch): hash does not match the event’s content; the 3 events before it verify',
    );
    expect(r.stderr).toContain('FAILED: the audit log does not verify');
    expect(r.stdout).toBe('');
  });

  it('detects a middle row the superuser deleted with the triggers disabled', async () => {
    const db = dbs.deleted!;
    await asSuperuser(
      db,
      `ALTER TABLE skills_mcp.audit_events DISABLE TRIGGER USER;
       DELETE FROM skills_mcp.audit_events WHERE event_id = 5;
       ALTER TABLE skills_mcp.audit_events ENABLE TRIGGER USER`,
    );
    const r = verify(db);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('chain: BROKEN at event 6 (event_id_gap): expected event 5, found 6');
  });

  it('cannot see the newest rows deleted (the chain alone has no record of its head), and says so', async () => {
    const db = dbs.cut!;
    await asSuperuser(
      db,
      `SET session_replication_role = replica; DELETE FROM skills_mcp.audit_events WHERE event_id > 8`,
    );
    const r = verify(db);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/chain: ok, 8 events/);
    expect(r.stdout).toContain('the newest events could have been deleted without a trace');
  });

  it('shows the newest rows deleted when the server anchored the chain head outside the database', async () => {
    const db = dbs.anchored!;
    const t = tempDir();
    try {
      const paths = { file: join(t.dir, 'audit.anchors'), keyFile: join(t.dir, 'anchor.key') };
      const log = openPgAuditLog({ url: db.writerUrl, env: { PGPASSWORD: db.writer.password } });
      try {
        expect(await log.anchor(paths)).toMatchObject({ seq: 1, events: 10 });
        await log.append({ type: 'session_error', sessionId: 's1', payload: { code: 'X', ref: null } });
        expect(await log.anchor(paths)).toMatchObject({ seq: 2, events: 11 });
        expect(await log.anchor(paths)).toBeUndefined();
      } finally {
        await log.close();
      }
      const args = ['--anchors', paths.file, '--anchor-key', paths.keyFile];
      const before = runCli(['audit', 'verify', '--audit', db.writerUrl, ...args], {
        env: { PGPASSWORD: db.writer.password },
      });
      expect(before.code, before.stderr).toBe(0);
      expect(before.stdout).toContain(`anchors: ok, 2 match ${paths.file}; events 1-11 are vouched for`);

      await asSuperuser(
        db,
        `SET session_replication_role = replica;
         DELETE FROM skills_mcp.audit_events WHERE event_id > 9;
         DELETE FROM skills_mcp.anchor_copies`,
      );
      const after = runCli(['audit', 'verify', '--audit', db.writerUrl, ...args], {
        env: { PGPASSWORD: db.writer.password },
      });
      expect(after.code).toBe(1);
      expect(after.stderr).toMatch(/chain: ok, 9 events/);
      expect(after.stderr).toContain(`anchors: TAMPERING DETECTED (0 anchors match, ${paths.file})`);
      expect(after.stderr).toMatch(
        /line 1 truncated: anchor #1 of .* vouches for 10 events; the log holds 9/,
      );
      expect(after.stderr).toMatch(/copy_behind: the database holds no copy of the newest anchor \(#2\)/);
    } finally {
      t.cleanup();
    }
  });

  it('exports every event as a JSON line in chain order', () => {
    const db = dbs.intact!;
    const r = runCli(['audit', 'export', '--jsonl', '--audit', db.writerUrl], {
      env: { PGPASSWORD: db.writer.password },
    });
    expect(r.code).toBe(0);
    const lines = r.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { event_id: number; type: string });
    expect(lines.map((l) => l.event_id)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    expect(lines[0]!.type).toBe('tool_call_requested');
  });

  it('fails with exit 1 and the cause when the password is wrong or the database unreachable', () => {
    const db = dbs.intact!;
    const wrong = verify(db, { PGPASSWORD: 'not-it' });
    expect(wrong.code).toBe(1);
    expect(wrong.stderr).toMatch(
      /cannot read the events: the database refused it \(28P01\): password authentication failed/,
    );
    const gone = verify(
      db,
      { PGPASSWORD: db.writer.password },
      `postgres://x@/intact?host=${server.socketDir}/nowhere`,
    );
    expect(gone.code).toBe(1);
    expect(gone.stderr).toMatch(/the audit database is unreachable \(ENOENT\)/);
  });

  it('refuses the SQLite-only audit commands, and a malformed URL, with exit 2', () => {
    const db = dbs.intact!;
    const list = runCli(['audit', 'list', '--audit', db.writerUrl]);
    expect(list.code).toBe(2);
    expect(list.stderr).toContain(
      'list reads the SQLite audit log only; a PostgreSQL log supports verify and export',
    );
    const bad = runCli(['audit', 'verify', '--audit', 'postgres://u:hunter2@h/db?sslmod=require']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('audit: postgres://u:***@h/db?sslmod=require: unknown parameter "sslmod"');
    expect(bad.stderr).not.toContain('hunter2');
  });
});

describe('skills-mcp --audit postgres://… (serving, running)', () => {
  it('exits 2 for `run`, which writes a SQLite log only, without falling back to SQLite', () => {
    const db = dbs.intact!;
    const url = db.writerUrl.replace('intact_writer@', 'intact_writer:s3cret-in-url@');
    const r = runCli(['run', 'echo', '--skills', '.', '--audit', url], {
      env: { PGPASSWORD: db.writer.password },
    });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(
      'skills-mcp: invalid configuration\n  audit: postgres://intact_writer:***@/intact?host=',
    );
    expect(r.stderr).toContain('run cannot use a PostgreSQL audit log yet');
    expect(r.stdout).toBe('');
    expect(r.stderr).not.toContain('s3cret-in-url');
  });

  it('exits 2 at start when the server is given a PostgreSQL URL it cannot use, and never shows its password', () => {
    const r = runCli(['--skills', '.', '--audit', 'postgres://u:hunter2@h/db?sslmod=require']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(
      'skills-mcp: invalid configuration\n  audit: postgres://u:***@h/db?sslmod=require: unknown parameter "sslmod"',
    );
    expect(r.stdout).toBe('');
    expect(r.stderr).not.toContain('hunter2');
  });

  it('exits 2 when serving over HTTP with a PostgreSQL log and no shared state key file', () => {
    const db = dbs.intact!;
    const r = runCli(['--http', '--port', '0', '--skills', '.', '--audit', db.writerUrl], {
      env: { PGPASSWORD: db.writer.password },
    });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(
      /^skills-mcp: invalid configuration\n {2}http\.state_key_file: required when serving over HTTP with a PostgreSQL audit log/,
    );
    expect(r.stdout).toBe('');
  });
});
