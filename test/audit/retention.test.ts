import Database from 'better-sqlite3';
import { spawn } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { loadAnchorKey } from '../../src/audit/anchor-key.js';
import { openAuditStore, type AuditStore } from '../../src/audit/index.js';
import { gatedFixture, type GatedFixture } from '../helpers/gated-fixture.js';
import { runCli } from '../helpers/run-cli.js';
import { connectStdio } from '../helpers/stdio-client.js';
import { builtCli } from '../helpers/temp-dir.js';
import { gatedCall, startSession } from './helpers/sample-events.js';
import { tempDir } from './helpers/temp-dir.js';
import { anchorOnDemand } from './helpers/anchor-on-demand.js';

const DAY = 86_400_000;

describe('audit retention: archive and prune (built CLI, real SQLite files)', () => {
  let t: ReturnType<typeof tempDir>;
  beforeEach(() => {
    t = tempDir();
  });
  afterEach(() => t.cleanup());

  const keyFile = () => join(t.dir, 'state', 'audit-anchor.key');
  const audit = (...args: string[]) => runCli(['audit', ...args, '--audit', t.dbPath]);
  const out = (name: string) => join(t.dir, name);

  /**
   * Writes to the log as the server does (with the anchor key: writer marks, anchors at the end), with a clock set
   * to `daysAgo` days before now while `fn` runs.
   */
  function write(fn: (store: AuditStore, at: (daysAgo: number) => void) => void): void {
    let clock = Date.now();
    const key = loadAnchorKey(keyFile(), { create: true });
    const store = openAuditStore({ path: t.dbPath, writerKey: key, now: () => clock });
    const anchoring = anchorOnDemand({
      store,
      keyFile: keyFile(),
      key: { key, isNew: false },
      file: `${t.dbPath}.anchors`,
      now: () => clock,
    });
    try {
      fn(store, (daysAgo) => (clock = Date.now() - daysAgo * DAY));
      anchoring.anchorNow();
    } finally {
      anchoring.stop();
      store.close();
    }
  }

  /** One whole session at `daysAgo`: started, one gated call, ended. */
  const session = (store: AuditStore, at: (d: number) => void, daysAgo: number): string => {
    at(daysAgo);
    const s = startSession(store);
    gatedCall(store, s);
    store.endSession(s, 'client_closed');
    return s;
  };

  const remaining = () => {
    const db = new Database(t.dbPath, { readonly: true });
    try {
      const q = (sql: string) => (db.prepare(sql).get() as { n: number | null }).n;
      return {
        first: q('SELECT MIN(event_id) AS n FROM events'),
        events: q('SELECT COUNT(*) AS n FROM events'),
        sessions: q('SELECT COUNT(*) AS n FROM sessions'),
        checkpoints: q('SELECT COUNT(*) AS n FROM checkpoints'),
      };
    } finally {
      db.close();
    }
  };

  it('archives old closed sessions and prunes them; verify goes on from the checkpoint', () => {
    write((store, at) => {
      session(store, at, 40);
      session(store, at, 35);
      session(store, at, 2);
    });
    const a = audit('archive', '--older-than', '30', '--out', out('a1.jsonl'));
    expect(a.stderr).toBe('');
    expect(a.code).toBe(0);
    expect(a.stdout).toContain('archived events 1-16 (2 sessions)');
    expect(remaining()).toEqual({ first: 17, events: 8, sessions: 1, checkpoints: 1 });

    const v = audit('verify');
    expect(v.stderr).toBe('');
    expect(v.code).toBe(0);
    const sha = /sha256 ([0-9a-f]{64})/.exec(a.stdout)![1]!;
    expect(v.stdout).toContain(`checkpoint: ok, events 1-16 archived (checkpoint #1 of `);
    expect(v.stdout).toContain(`archive sha256 ${sha})`);
    expect(v.stdout).toMatch(/chain: ok, 24 events/);
    expect(v.stdout).toMatch(/writers: ok, every event is vouched for/);

    const lines = readFileSync(out('a1.jsonl'), 'utf8').trim().split('\n');
    expect(lines.filter((l) => !l.includes('"record"'))).toHaveLength(16);
    expect(JSON.parse(lines.at(-1)!)).toMatchObject({ record: 'archive_summary', first: 1, last: 16 });
    const withArchive = audit('verify', '--archive', out('a1.jsonl'));
    expect(withArchive.code).toBe(0);
    expect(withArchive.stdout).toContain(`archive: ok, events 1-16 of ${out('a1.jsonl')}`);
    expect(audit('list').stdout).toContain('1 call\n');
  });

  it('detects an archive changed by one byte', () => {
    write((store, at) => {
      session(store, at, 40);
      session(store, at, 1);
    });
    expect(audit('archive', '--older-than', '30', '--out', out('a.jsonl')).code).toBe(0);
    const bytes = readFileSync(out('a.jsonl'));
    const at = bytes.indexOf('"exit_code":0');
    bytes[at + 12] = '1'.charCodeAt(0);
    writeFileSync(out('a.jsonl'), bytes);
    const v = audit('verify', '--archive', out('a.jsonl'));
    expect(v.code).toBe(1);
    expect(v.stderr).toContain('archive: FAILED');
    expect(v.stderr).toMatch(/hash_mismatch/);
    expect(v.stderr).toContain('no checkpoint of this log names its sha256');
  });

  it('fails on a checkpoint made without the anchor key to hide a cut', () => {
    write((store, at) => {
      session(store, at, 40);
      session(store, at, 1);
    });
    const db = new Database(t.dbPath);
    const hash = (db.prepare('SELECT hash FROM events WHERE event_id = 8').get() as { hash: string }).hash;
    const first = (db.prepare('SELECT hash FROM events WHERE event_id = 1').get() as { hash: string }).hash;
    db.prepare('INSERT INTO checkpoints VALUES (1, 8, ?, ?, ?, ?, ?)').run(
      hash,
      first,
      'a'.repeat(64),
      Date.now(),
      'b'.repeat(64),
    );
    db.exec('DELETE FROM writer_marks WHERE last_event <= 8; DELETE FROM events WHERE event_id <= 8');
    db.close();
    const v = audit('verify');
    expect(v.code).toBe(1);
    expect(v.stderr).toContain('checkpoint: FAILED, events 1-8 pruned under checkpoints that do not verify');
    expect(v.stderr).toContain('checkpoint #1 (events 1-8) is NOT SIGNED with this key');
  });

  it('fails on an event a writer put back into the pruned range, behind the checkpoint', () => {
    write((store, at) => {
      session(store, at, 40);
      session(store, at, 1);
    });
    expect(audit('archive', '--older-than', '30', '--out', out('a.jsonl')).code).toBe(0);
    const db = new Database(t.dbPath);
    const cols = (db.prepare('PRAGMA table_info(events)').all() as { name: string }[])
      .map((c) => c.name)
      .filter((c) => c !== 'event_id');
    db.exec('DROP TRIGGER events_extend_chain');
    db.prepare(
      `INSERT INTO events (event_id, ${cols.join(', ')}) SELECT 5, ${cols.join(', ')} FROM events WHERE event_id = 9`,
    ).run();
    db.close();
    const v = audit('verify');
    expect(v.code).toBe(1);
    expect(v.stderr).toContain('event 5 is behind checkpoint #1 (events 1-8 were pruned)');
  });

  it('fails when a writer dropped or disarmed the triggers that keep the log append-only', () => {
    write((store, at) => {
      session(store, at, 40);
      session(store, at, 1);
    });
    expect(audit('archive', '--older-than', '30', '--out', out('a.jsonl')).code).toBe(0);
    expect(audit('verify').stdout).toContain('database: ok, its tables, indexes and guard triggers agree');
    const db = new Database(t.dbPath);
    db.exec(`DROP TRIGGER checkpoints_no_delete;
      DROP TRIGGER events_no_delete;
      CREATE TRIGGER events_no_delete BEFORE DELETE ON events WHEN 0 BEGIN SELECT 1; END;`);
    db.close();
    const v = audit('verify');
    expect(v.code).toBe(1);
    expect(v.stderr).toContain('trigger checkpoints_no_delete was dropped: the log is no longer append-only');
    expect(v.stderr).toContain('trigger events_no_delete was replaced by another');
    // Opening the log to write (the server, archive, reanchor) puts them back.
    openAuditStore({ path: t.dbPath }).close();
    expect(audit('verify').stdout).toContain('database: ok, its tables, indexes and guard triggers agree');
  });

  it('never prunes an open session, nor anything after it', () => {
    let open = '';
    write((store, at) => {
      at(50);
      open = startSession(store);
      session(store, at, 40);
    });
    const a = audit('archive', '--older-than', '30', '--out', out('a.jsonl'));
    expect(a.code).toBe(0);
    expect(a.stdout).toContain('nothing to archive');
    expect(existsSync(out('a.jsonl'))).toBe(false);
    expect(remaining()).toMatchObject({ first: 1, events: 9, checkpoints: 0 });
    expect(open).not.toBe('');
  });

  it('stops the prefix at the first event of a session too young to archive', () => {
    write((store, at) => {
      session(store, at, 40);
      session(store, at, 5);
      session(store, at, 40);
    });
    const a = audit('archive', '--older-than', '30', '--out', out('a.jsonl'));
    expect(a.stdout).toContain('archived events 1-8 (1 session)');
    expect(remaining()).toMatchObject({ first: 9, events: 16, sessions: 2 });
    expect(audit('verify').code).toBe(0);
  });

  it('chains a second archive to the first checkpoint', () => {
    write((store, at) => {
      session(store, at, 40);
      session(store, at, 20);
      session(store, at, 1);
    });
    expect(audit('archive', '--older-than', '30', '--out', out('a1.jsonl')).code).toBe(0);
    const second = audit('archive', '--older-than', '10', '--out', out('a2.jsonl'));
    expect(second.stdout).toContain('archived events 9-16 (1 session)');
    expect(second.stdout).toContain('checkpoint #2 at event 16');
    const a1 = readFileSync(out('a1.jsonl'), 'utf8').trim().split('\n');
    const a2 = readFileSync(out('a2.jsonl'), 'utf8').trim().split('\n');
    expect(JSON.parse(a2[0]!).prev_hash).toBe(JSON.parse(a1.at(-1)!).last_hash);
    for (const f of ['a1.jsonl', 'a2.jsonl']) {
      const v = audit('verify', '--archive', out(f));
      expect(v.stderr).toBe('');
      expect(v.code).toBe(0);
    }
    expect(audit('verify').stdout).toContain('events 1-16 archived (checkpoint #2 of');
  });

  it('--dry-run says what it would archive and changes nothing', () => {
    write((store, at) => {
      session(store, at, 40);
      session(store, at, 1);
    });
    const before = audit('export', '--jsonl').stdout;
    const a = audit('archive', '--older-than', '30', '--out', out('a.jsonl'), '--dry-run');
    expect(a.code).toBe(0);
    expect(a.stdout).toContain('would archive events 1-8 (1 session)');
    expect(existsSync(out('a.jsonl'))).toBe(false);
    expect(audit('export', '--jsonl').stdout).toBe(before);
    expect(remaining()).toMatchObject({ first: 1, checkpoints: 0 });
  });

  it('leaves all or nothing when the prune is killed before its commit', async () => {
    write((store, at) => {
      session(store, at, 40);
      session(store, at, 1);
    });
    const child = spawn(
      process.execPath,
      [builtCli, 'audit', 'archive', '--older-than', '30', '--out', out('a.jsonl'), '--audit', t.dbPath],
      { env: { PATH: process.env.PATH ?? '/usr/bin:/bin', SKILLS_MCP_TEST_PAUSE_PRUNE: '1' }, stdio: 'pipe' },
    );
    let err = '';
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    const exited = new Promise((resolve) => child.on('exit', (_code, signal) => resolve(signal)));
    await vi.waitFor(() => expect(err).toContain('prune: paused before commit'), { timeout: 20_000 });
    child.kill('SIGKILL');
    expect(await exited).toBe('SIGKILL');
    const state = remaining();
    expect(state).toMatchObject({ first: 1, events: 16, checkpoints: 0 });
    expect(audit('verify').code).toBe(0);
    // The archive written before the prune is not a checkpoint's: a new archive goes to a new file.
    const again = audit('archive', '--older-than', '30', '--out', out('b.jsonl'));
    expect(again.code).toBe(0);
    expect(remaining()).toMatchObject({ first: 9, checkpoints: 1 });
    expect(audit('verify', '--archive', out('b.jsonl')).code).toBe(0);
  });
});

describe('audit retention of a PostgreSQL log', () => {
  it('refuses to archive it, saying so, before connecting', () => {
    const r = runCli(
      ['audit', 'archive', '--older-than', '1', '--out', '/nonexistent/a.jsonl'].concat([
        '--audit',
        'postgres://audit@127.0.0.1:1/none',
      ]),
    );
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('a PostgreSQL audit log cannot be archived or pruned yet');
  });
});

describe('audit retention with the server (built binary)', () => {
  let fx: GatedFixture | undefined;
  afterEach(() => {
    fx?.cleanup();
    fx = undefined;
  });

  const serveAndRead = async (note: string) => {
    const c = await connectStdio({
      era: 'legacy',
      args: ['--skills', fx!.skills, '--no-watch'],
      env: { SKILLS_MCP_AUDIT: fx!.auditPath },
    });
    try {
      const r = await c.client.callTool({
        name: 'read_skill_file',
        arguments: { skill: 'echo', path: 'SKILL.md', note },
      });
      expect(r.isError).toBeFalsy();
    } finally {
      await c.close();
    }
  };

  it('serves and appends after a prune, and the log still verifies', async () => {
    fx = gatedFixture('approval:\n  mode: ask\n');
    await serveAndRead('one');
    await serveAndRead('two');
    const audit = (...args: string[]) => runCli(['audit', ...args, '--audit', fx!.auditPath]);
    const a = audit('archive', '--older-than', '0', '--out', join(fx.dir, 'a.jsonl'));
    expect(a.stderr).toBe('');
    expect(a.stdout).toMatch(/archived events 1-\d+ \(2 sessions\)/);
    await serveAndRead('three');
    const v = audit('verify', '--archive', join(fx.dir, 'a.jsonl'));
    expect(v.stderr).toBe('');
    expect(v.code).toBe(0);
    expect(v.stdout).toMatch(/anchors: ok/);
    expect(audit('list').stdout).toContain('1 call\n');
  }, 120_000);
});
