import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openPgAuditLog, type PgAuditLog } from '../../src/audit/postgres/open-pg-audit-log.js';
import type { PgAppendInput } from '../../src/audit/postgres/append-pg-events.js';
import { isSkillsError } from '../../src/errors.js';
import {
  createAuditDb,
  startTestPostgres,
  type TestAuditDb,
  type TestPostgres,
} from '../helpers/postgres.js';
import { finished, requested } from './helpers/sample-events.js';

// A real PostgreSQL (Debian's package) started by this file in a temp folder, unix socket only.
let server: TestPostgres;
let db: TestAuditDb;
const logs: PgAuditLog[] = [];
const open = (env: Record<string, string> = { PGPASSWORD: db.writer.password }) => {
  const log = openPgAuditLog({ url: db.writerUrl, env, connectTimeoutMs: 2_000 });
  logs.push(log);
  return log;
};
const call = (sessionId: string, callId: string): PgAppendInput[] => [
  { type: 'tool_call_requested', sessionId, callId, payload: requested() },
  { type: 'tool_call_finished', sessionId, callId, payload: finished() },
];
const as = <T>(role: { user: string; password: string }, fn: (c: pg.Client) => Promise<T>): Promise<T> =>
  server.as(role, db.database, fn);
const sqlError = (p: Promise<unknown>) =>
  p.then(
    () => 'no error',
    (e: { code?: string; message: string }) => `${e.code}: ${e.message}`,
  );

beforeAll(async () => {
  server = startTestPostgres();
  db = await createAuditDb(server);
});
afterAll(async () => {
  await Promise.all(logs.map((l) => l.close()));
  server?.cleanup();
});

describe('the PostgreSQL audit log', () => {
  it('chains the appends of 20 concurrent writers into one gapless, verifying chain', async () => {
    const writers = Array.from({ length: 20 }, () => open());
    const perWriter = 8;
    const results = await Promise.all(
      writers.map(async (w, i) => {
        const out = [];
        for (let n = 0; n < perWriter; n++)
          out.push(...(await w.appendMany(call(`writer-${i}`, `w${i}-c${n}`))));
        return out;
      }),
    );
    const all = results.flat().sort((a, b) => a.eventId - b.eventId);
    expect(all.map((e) => e.eventId)).toEqual(Array.from({ length: 20 * perWriter * 2 }, (_, i) => i + 1));
    // Each pair was written in one transaction: its two events are adjacent in the chain.
    for (const r of results)
      for (let i = 0; i < r.length; i += 2) expect(r[i + 1]!.eventId).toBe(r[i]!.eventId + 1);
    const { chain } = await writers[0]!.verify();
    expect(chain).toEqual({ ok: true, events: 320, head: all.at(-1)!.hash });
    const exported = [];
    for await (const e of writers[3]!.exportEvents()) exported.push(e);
    expect(exported.map((e) => e.hash)).toEqual(all.map((e) => e.hash));
    expect(exported[0]!.prev_hash).toBe('0'.repeat(64));
  });

  it('refuses an invalid or private payload before touching the database, and writes none of its batch', async () => {
    const log = open();
    const before = (await log.verify()).chain.events;
    const bad = log.appendMany([
      ...call('s-bad', 'c-bad'),
      { type: 'tool_call_finished', sessionId: 's-bad', callId: 'c-bad', payload: { secret_token: 'x' } },
    ]);
    await expect(bad).rejects.toMatchObject({ code: 'AUDIT_FAILED' });
    expect((await log.verify()).chain.events).toBe(before);
  });

  it('refuses UPDATE, DELETE and TRUNCATE by the server role, and an INSERT that does not extend the chain', async () => {
    const refused = await as(db.writer, async (c) => ({
      update: await sqlError(
        c.query("UPDATE skills_mcp.audit_events SET type = 'session_error' WHERE event_id = 2"),
      ),
      delete: await sqlError(c.query('DELETE FROM skills_mcp.audit_events WHERE event_id = 2')),
      truncate: await sqlError(c.query('TRUNCATE skills_mcp.audit_events')),
      disable: await sqlError(c.query('ALTER TABLE skills_mcp.audit_events DISABLE TRIGGER USER')),
      copies: await sqlError(c.query('DELETE FROM skills_mcp.anchor_copies')),
      forged: await sqlError(
        c.query(
          `INSERT INTO skills_mcp.audit_events VALUES (9999, 0, 's', NULL, 'session_error', '{}', repeat('0', 64), repeat('a', 64))`,
        ),
      ),
    }));
    expect(refused.update).toMatch(/^42501: permission denied/);
    expect(refused.delete).toMatch(/^42501: permission denied/);
    expect(refused.truncate).toMatch(/^42501: permission denied/);
    expect(refused.disable).toMatch(/^42501: must be owner/);
    expect(refused.copies).toMatch(/^42501: permission denied/);
    expect(refused.forged).toMatch(/^23000: audit event 9999 does not extend the chain/);
  });

  it('refuses UPDATE, DELETE and TRUNCATE by the owner too, through its triggers', async () => {
    const t = 'skills_mcp.audit_events';
    const refused = await as(db.owner, async (c) => ({
      update: await sqlError(c.query(`UPDATE ${t} SET ts = 0 WHERE event_id = 1`)),
      delete: await sqlError(c.query(`DELETE FROM ${t} WHERE event_id = 1`)),
      truncate: await sqlError(c.query(`TRUNCATE ${t}`)),
    }));
    expect(refused.update).toMatch(/^42501: audit records are append-only: UPDATE refused/);
    expect(refused.delete).toMatch(/^42501: audit records are append-only: DELETE refused/);
    expect(refused.truncate).toMatch(/^42501: audit records are append-only: TRUNCATE refused/);
  });

  it('rejects appends with AUDIT_FAILED while the database is stopped, and appends again once it is back', async () => {
    const log = open();
    await log.appendMany(call('s-stop', 'c-before'));
    server.stop();
    try {
      const err = await log.appendMany(call('s-stop', 'c-during')).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(isSkillsError(err) && err.code).toBe('AUDIT_FAILED');
      expect((err as Error).message).toMatch(
        /^audit log \(PostgreSQL\): cannot append: the audit database is unreachable/,
      );
      expect((err as Error).message).not.toContain(db.writer.password);
    } finally {
      server.start();
    }
    const after = await log.appendMany(call('s-stop', 'c-after'));
    expect(after.map((e) => e.callId)).toEqual(['c-after', 'c-after']);
    const events = [];
    for await (const e of log.exportEvents()) events.push(e);
    expect(events.filter((e) => e.session_id === 's-stop').map((e) => e.call_id)).toEqual([
      'c-before',
      'c-before',
      'c-after',
      'c-after',
    ]);
    expect((await log.verify()).chain.ok).toBe(true);
  });

  it('takes the password from a password file when the URL and PGPASSWORD hold none', async () => {
    const { tempDir } = await import('../helpers/temp-dir.js');
    const { writeFileSync } = await import('node:fs');
    const t = tempDir();
    try {
      const file = `${t.dir}/pgpass`;
      writeFileSync(file, `# test\nlocalhost:5432:${db.database}:${db.writer.user}:${db.writer.password}\n`, {
        mode: 0o600,
      });
      const log = open({ PGPASSFILE: file });
      expect((await log.append({ ...call('s-file', 'c-file')[0]! })).callId).toBe('c-file');
      const wrong = open({ PGPASSWORD: 'not-the-password' });
      await expect(wrong.append(call('s-file', 'c-wrong')[0]!)).rejects.toMatchObject({
        code: 'AUDIT_FAILED',
        message: expect.stringMatching(/28P01/),
      });
    } finally {
      t.cleanup();
    }
  });
});
