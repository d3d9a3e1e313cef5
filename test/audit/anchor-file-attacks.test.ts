import Database from 'better-sqlite3';
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  readFileSync,
  readdirSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { gatedFixture } from '../helpers/gated-fixture.js';
import {
  auditCli,
  client,
  dropAnchorCopy,
  flipDenial,
  serve,
  stop,
  tamper,
  verify,
} from './helpers/anchored-server.js';

const ASK = 'approval:\n  mode: ask\n';
const eventCount = (db: string) => {
  const d = new Database(db, { readonly: true });
  const { n } = d.prepare('SELECT COUNT(*) AS n FROM events').get() as { n: number };
  d.close();
  return n;
};
const anchorLines = (file: string) => readFileSync(file, 'utf8').trim().split('\n');
const anchoredEvents = (line: string) => (JSON.parse(line) as { events: number }).events;

/**
 * The attacker can write the database and the anchor file, but cannot read the key. The log was written by two
 * lives of the server: the first ran one approved call, the second had one call denied. The attacks rewrite the
 * second life (the denial becomes an approval, re-hashed) and hide it by deleting, emptying or cutting the anchor
 * file.
 */
describe('deleting or cutting the anchor file does not hide a rewritten log (built binary, real sandbox)', () => {
  let fx: ReturnType<typeof gatedFixture>;
  let anchors: string;
  let key: string;
  let firstLife: number;
  /** A copy of the log (and, when asked, of its anchor file) in a folder of its own, signed by the same key. */
  const copy = (name: string, anchorText?: string) => {
    const dir = join(fx.dir, name);
    mkdirSync(dir);
    const db = join(dir, 'audit.db');
    copyFileSync(fx.auditPath, db);
    const file = join(dir, 'audit.db.anchors');
    if (anchorText !== undefined) writeFileSync(file, anchorText, { mode: 0o600 });
    return { dir, db, file, config: `${ASK}audit_anchors:\n  file: ${file}\n  key_file: ${key}\n` };
  };

  beforeAll(async () => {
    fx = gatedFixture(ASK);
    const first = await serve(fx.dir, fx.skills, ASK, fx.auditPath);
    const a = await client(first.url, ['approved']);
    expect((await a.client.callTool({ name: 'echo', arguments: { text: 'one' } })).isError).toBeFalsy();
    await a.client.close();
    await stop(first.server);
    firstLife = eventCount(fx.auditPath);
    const second = await serve(fx.dir, fx.skills, ASK, fx.auditPath);
    const b = await client(second.url, ['denied']);
    expect((await b.client.callTool({ name: 'echo', arguments: { text: 'two' } })).isError).toBe(true);
    await b.client.close();
    await stop(second.server);
    anchors = `${fx.auditPath}.anchors`;
    key = join(fx.dir, 'state', 'audit-anchor.key');
  }, 90_000);
  afterAll(() => fx.cleanup());

  it.each(['deleted', 'emptied'] as const)(
    'refuses new runs after the anchor file is %s and the log rewritten, the key kept; read-only tools answer',
    async (how) => {
      const c = copy(`restart-${how}`, how === 'emptied' ? '' : undefined);
      tamper(c.db, (d) => {
        dropAnchorCopy(d);
        return flipDenial(d);
      });
      const { server, url } = await serve(c.dir, fx.skills, c.config, c.db);
      try {
        const m = await client(url, ['approved']);
        const read = await m.client.callTool({
          name: 'read_skill_file',
          arguments: { skill: 'echo', path: 'SKILL.md' },
        });
        expect(read.isError).toBeFalsy();
        const run = await m.client.callTool({ name: 'echo', arguments: { text: 'after the rewrite' } });
        expect(run.isError).toBe(true);
        expect(JSON.stringify(run.content)).toContain('the audit log failed verification');
        expect(JSON.stringify(run.content)).toContain(
          `the anchor file is ${how === 'deleted' ? 'missing' : 'empty'}, yet the log holds`,
        );
        await m.client.close();
      } finally {
        await stop(server);
      }
      // The operator's log names the file and the way out.
      const refusal = server
        .stderr()
        .split('\n')
        .find((l) => l.includes('audit anchors do not match the log'));
      expect(refusal).toContain(c.file);
      expect(refusal).toContain('skills-mcp audit reanchor --i-understand');
      // And nothing vouches for the rewrite: the server wrote no anchor of it.
      expect(existsSync(c.file) ? readFileSync(c.file, 'utf8') : '').toBe('');
    },
    60_000,
  );

  it.each(['deleted', 'emptied'] as const)(
    'audit verify fails when the key exists and the anchor file is %s',
    (how) => {
      const c = copy(`verify-${how}`, how === 'emptied' ? '' : undefined);
      const r = verify(c.db, c.file, key);
      expect(r.code).toBe(1);
      expect(r.out).toBe('');
      expect(r.err).toMatch(/chain: ok/);
      expect(r.err).toContain(
        `missing: the anchor file is ${how === 'deleted' ? 'missing' : 'empty'}, yet the log holds`,
      );
      expect(r.err).toContain('skills-mcp audit reanchor --i-understand');
    },
  );

  it('audit verify fails when the anchor file is cut back to the first life and the second life re-hashed', () => {
    const kept = anchorLines(anchors).filter((l) => anchoredEvents(l) <= firstLife);
    expect(kept.length).toBeGreaterThan(0);
    expect(kept.length).toBeLessThan(anchorLines(anchors).length);
    const c = copy('cut', `${kept.join('\n')}\n`);
    tamper(c.db, flipDenial);
    const r = verify(c.db, c.file, key);
    expect(r.code).toBe(1);
    expect(r.err).toMatch(/chain: ok/);
    expect(r.err).toMatch(/lines_deleted: the database records anchor #\d+ of .* the file ends at #\d+/);
  });

  it('audit verify fails when the database copy is removed too', () => {
    const kept = anchorLines(anchors).filter((l) => anchoredEvents(l) <= firstLife);
    const c = copy('cut-both', `${kept.join('\n')}\n`);
    tamper(c.db, (d) => {
      dropAnchorCopy(d);
      return flipDenial(d);
    });
    const r = verify(c.db, c.file, key);
    expect(r.code).toBe(1);
    expect(r.err).toMatch(/copy_behind: the database holds no copy of the newest anchor \(#\d+\)/);
  });

  it('refuses new runs once the anchor file is deleted while serving', async () => {
    const t = gatedFixture(`${ASK}audit_anchors:\n  interval_ms: 200\n`);
    const { server, url } = await serve(
      t.dir,
      t.skills,
      `${ASK}audit_anchors:\n  interval_ms: 200\n`,
      t.auditPath,
    );
    try {
      const m = await client(url, ['approved', 'approved']);
      expect((await m.client.callTool({ name: 'echo', arguments: { text: 'a' } })).isError).toBeFalsy();
      const file = `${t.auditPath}.anchors`;
      const finished = eventCount(t.auditPath);
      await vi.waitFor(
        () => expect(anchoredEvents(anchorLines(file).at(-1)!)).toBeGreaterThanOrEqual(finished),
        {
          timeout: 20_000,
          interval: 100,
        },
      );
      rmSync(file);
      await vi.waitFor(() => expect(server.stderr()).toContain('new runs are refused'), {
        timeout: 20_000,
        interval: 100,
      });
      const run = await m.client.callTool({ name: 'echo', arguments: { text: 'b' } });
      expect(run.isError).toBe(true);
      expect(JSON.stringify(run.content)).toContain('the anchor file lost anchor #');
      const read = await m.client.callTool({
        name: 'read_skill_file',
        arguments: { skill: 'echo', path: 'SKILL.md' },
      });
      expect(read.isError).toBeFalsy();
      await m.client.close();
    } finally {
      await stop(server);
      t.cleanup();
    }
  }, 60_000);

  it('lets the operator accept the log as it stands with audit reanchor --i-understand, and says so ever after', async () => {
    const kept = anchorLines(anchors).filter((l) => anchoredEvents(l) <= firstLife);
    const c = copy('reanchor', `${kept.join('\n')}\n`);
    tamper(c.db, flipDenial);
    const flags = ['--anchors', c.file, '--anchor-key', key];
    const refused = auditCli(c.db, 'reanchor', ...flags);
    expect(refused.code).toBe(2);
    expect(refused.err).toContain('--i-understand');
    const done = auditCli(c.db, 'reanchor', '--i-understand', ...flags);
    expect(done.code, done.err).toBe(0);
    expect(done.out).toMatch(/re-anchored: anchor #\d+ in .* vouches for the log as it stands \(\d+ events/);
    const aside = readdirSync(c.dir).find((n) => n.startsWith('audit.db.anchors.set-aside-'));
    expect(aside).toBeDefined();
    expect(readFileSync(join(c.dir, aside!), 'utf8')).toBe(`${kept.join('\n')}\n`);
    const r = verify(c.db, c.file, key);
    expect(r.code, r.err).toBe(0);
    expect(r.out).toMatch(/anchors: ok, 1 match/);
    expect(r.out).toMatch(/re-anchored by an operator at \S+ \(anchor #\d+\)/);
    expect(auditCli(c.db, 'reanchor', '--i-understand', ...flags).out).toContain('nothing to re-anchor');
    const { server, url } = await serve(c.dir, fx.skills, c.config, c.db);
    try {
      const m = await client(url, ['approved']);
      expect((await m.client.callTool({ name: 'echo', arguments: { text: 'again' } })).isError).toBeFalsy();
      await m.client.close();
    } finally {
      await stop(server);
    }
    expect(verify(c.db, c.file, key).code).toBe(0);
  }, 60_000);

  it('does not refuse runs after a crash before the first periodic anchor', async () => {
    const t = gatedFixture(ASK);
    try {
      const first = await serve(t.dir, t.skills, ASK, t.auditPath);
      const m = await client(first.url, ['approved']);
      expect((await m.client.callTool({ name: 'echo', arguments: { text: 'a' } })).isError).toBeFalsy();
      first.server.proc.kill('SIGKILL');
      await first.server.exited;
      await m.client.close().catch(() => undefined);
      const second = await serve(t.dir, t.skills, ASK, t.auditPath);
      try {
        const n = await client(second.url, ['approved']);
        expect((await n.client.callTool({ name: 'echo', arguments: { text: 'b' } })).isError).toBeFalsy();
        await n.client.close();
      } finally {
        await stop(second.server);
      }
      const r = verify(t.auditPath, `${t.auditPath}.anchors`, join(t.dir, 'state', 'audit-anchor.key'));
      expect(r.code, r.err).toBe(0);
    } finally {
      t.cleanup();
    }
  }, 60_000);
});
