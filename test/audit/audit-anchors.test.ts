import Database from 'better-sqlite3';
import { copyFileSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { gatedFixture } from '../helpers/gated-fixture.js';
import { servedUrl, spawnCli } from '../http/helpers/spawn-server.js';
import { client, flipDenial, stop, tamper, TOKEN, verify } from './helpers/anchored-server.js';

describe('audit anchors: the log proves itself (built binary, real sandbox)', () => {
  let fx: ReturnType<typeof gatedFixture>;
  let anchors: string;
  let key: string;
  let erasedSession: string;
  const copy = (name: string) => {
    const to = join(fx.dir, `${name}.db`);
    copyFileSync(fx.auditPath, to);
    return to;
  };

  beforeAll(async () => {
    fx = gatedFixture('approval:\n  mode: ask\n');
    const s = spawnCli(['--http', '--port', '0', ...fx.args], { SKILLS_MCP_TOKEN: TOKEN });
    const url = await servedUrl(s);
    const a = await client(url, ['approved', 'denied']);
    expect((await a.client.callTool({ name: 'echo', arguments: { text: 'one' } })).isError).toBeFalsy();
    expect((await a.client.callTool({ name: 'echo', arguments: { text: 'two' } })).isError).toBe(true);
    const b = await client(url, ['approved']);
    expect((await b.client.callTool({ name: 'echo', arguments: { text: 'three' } })).isError).toBeFalsy();
    erasedSession = b.transport.sessionId!;
    await b.transport.terminateSession();
    await a.client.close();
    await b.client.close();
    await stop(s);
    anchors = `${fx.auditPath}.anchors`;
    key = join(fx.dir, 'state', 'audit-anchor.key');
  }, 60_000);
  afterAll(() => fx.cleanup());

  it('anchors the chain head outside the database with a private key, and verifies', () => {
    expect(existsSync(anchors)).toBe(true);
    expect(readFileSync(anchors, 'utf8').trim().split('\n').length).toBeGreaterThan(0);
    const r = verify(fx.auditPath, anchors, key);
    expect(r.code, r.err).toBe(0);
    expect(r.out).toMatch(/anchors: ok, \d+ match/);
    expect(r.out).toContain('summary tables: ok');
  });

  it('detects a deleted tail', () => {
    const db = copy('tail-deleted');
    tamper(
      db,
      (d) => void d.exec('DELETE FROM events WHERE event_id > (SELECT MAX(event_id) - 9 FROM events)'),
    );
    const r = verify(db, anchors, key);
    expect(r.code).toBe(1);
    expect(r.out).toBe('');
    expect(r.err).toMatch(/chain: ok/);
    expect(r.err).toMatch(/line \d+ truncated: anchor #\d+ of .* vouches for \d+ events; the log holds \d+/);
  });

  it('detects a denial flipped to approved and re-hashed', () => {
    const db = copy('denial-flipped');
    tamper(db, flipDenial); // re-hashed from there on: the chain alone verifies again
    const r = verify(db, anchors, key);
    expect(r.code).toBe(1);
    expect(r.err).toMatch(/chain: ok/);
    expect(r.err).toContain('summary tables: ok');
    expect(r.err).toMatch(/line \d+ rewritten: event \d+ differs from anchor #\d+/);
  });

  it('detects a whole session erased and everything re-hashed', () => {
    const db = copy('session-erased');
    tamper(db, (d) => {
      d.prepare('DELETE FROM events WHERE session_id = ?').run(erasedSession);
      const ids = d.prepare('SELECT event_id FROM events ORDER BY event_id').all() as { event_id: number }[];
      const renumber = d.prepare('UPDATE events SET event_id = ? WHERE event_id = ?');
      ids.forEach((r, i) => renumber.run(i + 1, r.event_id));
      return 1;
    });
    const r = verify(db, anchors, key);
    expect(r.code).toBe(1);
    expect(r.err).toMatch(/chain: ok/);
    expect(r.err).toMatch(/line \d+ (truncated|rewritten): /);
  });

  it('names a summary table edited behind the events', () => {
    const db = copy('summary-edited');
    const d = new Database(db);
    const call = (
      d.prepare("SELECT call_id FROM approvals WHERE decision = 'denied'").get() as { call_id: string }
    ).call_id;
    d.prepare("UPDATE approvals SET decision = 'approved' WHERE call_id = ?").run(call);
    d.prepare("UPDATE calls SET approval_decision = 'approved', status = 'ok' WHERE call_id = ?").run(call);
    d.close();
    const r = verify(db, anchors, key);
    expect(r.code).toBe(1);
    expect(r.err).toMatch(/chain: ok/);
    expect(r.err).toMatch(/anchors: ok/);
    expect(r.err).toContain(`calls ${call} approval_decision: stored "approved", events give "denied"`);
    expect(r.err).toContain(`approvals ${call} decision: stored "approved", events give "denied"`);
  });

  it('refuses new runs when the log does not match its anchors at start-up; read-only tools answer', async () => {
    const db = copy('refused-at-start');
    tamper(
      db,
      (d) => void d.exec('DELETE FROM events WHERE event_id > (SELECT MAX(event_id) - 3 FROM events)'),
    );
    const config = join(fx.dir, 'anchored.yaml');
    writeFileSync(config, `approval:\n  mode: ask\naudit_anchors:\n  file: ${anchors}\n  key_file: ${key}\n`);
    const s = spawnCli(['--http', '--port', '0', '--skills', fx.skills, '--config', config, '--audit', db], {
      SKILLS_MCP_TOKEN: TOKEN,
    });
    try {
      const c = await client(await servedUrl(s), ['approved']);
      const read = await c.client.callTool({
        name: 'read_skill_file',
        arguments: { skill: 'echo', path: 'SKILL.md' },
      });
      expect(read.isError).toBeFalsy();
      const run = await c.client.callTool({ name: 'echo', arguments: { text: 'after tampering' } });
      expect(run.isError).toBe(true);
      expect(JSON.stringify(run.content)).toContain('the audit log failed verification');
      await c.client.close();
    } finally {
      await stop(s);
    }
    expect(s.stderr()).toContain('audit anchors do not match the log');
  });

  it('refuses new runs once the log is cut while serving', async () => {
    const t = gatedFixture('approval:\n  mode: ask\naudit_anchors:\n  interval_ms: 200\n');
    const s = spawnCli(
      [
        '--http',
        '--port',
        '0',
        '--skills',
        t.skills,
        '--config',
        t.configFile,
        '--audit',
        t.auditPath,
        '--no-watch',
      ],
      { SKILLS_MCP_TOKEN: TOKEN },
    );
    try {
      const c = await client(await servedUrl(s), ['approved', 'approved']);
      expect((await c.client.callTool({ name: 'echo', arguments: { text: 'a' } })).isError).toBeFalsy();
      // Wait for an anchor that covers the run, then cut the log's tail behind the server's back.
      const reader = new Database(t.auditPath, { readonly: true });
      const { n: last } = reader
        .prepare("SELECT MAX(event_id) AS n FROM events WHERE type = 'tool_call_finished'")
        .get() as { n: number };
      reader.close();
      await vi.waitFor(
        () => {
          const lines = readFileSync(`${t.auditPath}.anchors`, 'utf8').trim().split('\n');
          expect((JSON.parse(lines.at(-1)!) as { events: number }).events).toBeGreaterThanOrEqual(last);
        },
        { timeout: 20_000, interval: 100 },
      );
      tamper(t.auditPath, (d) => void d.prepare('DELETE FROM events WHERE event_id >= ?').run(last));
      await vi.waitFor(() => expect(s.stderr()).toContain('new runs are refused'), {
        timeout: 20_000,
        interval: 100,
      });
      const run = await c.client.callTool({ name: 'echo', arguments: { text: 'b' } });
      expect(run.isError).toBe(true);
      expect(JSON.stringify(run.content)).toContain('the audit log failed verification');
      const read = await c.client.callTool({
        name: 'read_skill_file',
        arguments: { skill: 'echo', path: 'SKILL.md' },
      });
      expect(read.isError).toBeFalsy();
      await c.client.close();
    } finally {
      await stop(s);
      t.cleanup();
    }
  });
});
