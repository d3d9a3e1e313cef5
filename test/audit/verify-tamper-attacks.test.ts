import Database from 'better-sqlite3';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { shortCallId } from '../../src/audit/call-id.js';
import { openAuditStore, type AuditStore } from '../../src/audit/index.js';
import { loadAnchorKey } from '../../src/audit/anchor-key.js';
import { auditCli, verify } from './helpers/anchored-server.js';
import { gatedCall, sha, startSession } from './helpers/sample-events.js';
import { tempDir } from './helpers/temp-dir.js';
import { anchorOnDemand } from './helpers/anchor-on-demand.js';

/**
 * The attacker writes the database and the data folder (not the key). A real store holds two approved calls and
 * is anchored; each attack edits what `audit list`, `show` and the console read, or the anchor file, and the built
 * binary's `audit verify` (or the serving store) must name it.
 */
describe('audit verify and anchoring against a writer of the database and the data folder', () => {
  let t: ReturnType<typeof tempDir>;
  let store: AuditStore;
  let file: string;
  let keyFile: string;
  let calls: string[];
  let open: boolean;
  /** The attacks edit the database with the store closed, as another process would. */
  const closeStore = () => {
    store.close();
    open = false;
  };
  const anchoring = () => anchorOnDemand({ store, keyFile, file });
  const edit = (fn: (d: Database.Database) => void) => {
    const d = new Database(t.dbPath);
    d.pragma('foreign_keys = OFF');
    fn(d);
    d.close();
  };

  beforeEach(() => {
    t = tempDir();
    file = `${t.dbPath}.anchors`;
    keyFile = join(t.dir, 'state', 'audit-anchor.key');
    store = openAuditStore({ path: t.dbPath, writerKey: loadAnchorKey(keyFile, { create: true }) });
    open = true;
    const a = anchoring();
    const s = startSession(store);
    calls = [gatedCall(store, s, sha('a')), gatedCall(store, s, sha('b'))];
    a.stop();
  });
  afterEach(() => {
    if (open) store.close();
    t.cleanup();
  });

  it('verifies the untouched log', () => {
    closeStore();
    const r = verify(t.dbPath, file, keyFile);
    expect(r.code, r.err).toBe(0);
  });

  it('names a summary table given a duplicate row that audit show reads instead of the true one', () => {
    closeStore();
    const call = calls[0]!;
    edit((d) => {
      // Same columns, no key: a forged "denied" row first (what a lookup by call id returns), the true row after it.
      d.exec(`CREATE TABLE forged AS SELECT * FROM approvals WHERE 0;
        INSERT INTO forged SELECT call_id, session_id, approval_key, channel, requested_event_id, requested_ts,
          decided_event_id, decided_ts, 'denied', 'declined' FROM approvals WHERE call_id = '${call}';
        INSERT INTO forged SELECT * FROM approvals;
        DROP TABLE approvals;
        ALTER TABLE forged RENAME TO approvals;`);
    });
    const shown = auditCli(t.dbPath, 'show', call, '--json');
    expect(shown.out + shown.err).toMatch(/"denied"/);
    const r = verify(t.dbPath, file, keyFile);
    expect(r.code, r.out).toBe(1);
    expect(r.err).toMatch(/summary tables: .*DIFFERENCE/);
    expect(r.err).toContain(`approvals ${call}`);
  });

  it('names an index that no longer matches its table, through which audit list hides a call', () => {
    closeStore();
    const hidden = calls[1]!;
    const rootOf = (d: Database.Database, name: string) =>
      (d.prepare('SELECT rootpage FROM sqlite_master WHERE name = ?').get(name) as { rootpage: number })
        .rootpage;
    let mine = 0;
    let decoy = 0;
    edit((d) => {
      // A decoy index holding every call's listing entry but one; its pages then stand in for `calls_order`.
      d.exec('CREATE TABLE decoy (x INTEGER); CREATE INDEX decoy_x ON decoy(x);');
      d.exec(
        `INSERT INTO decoy (rowid, x) SELECT rowid, requested_event_id FROM calls WHERE call_id <> '${hidden}'`,
      );
      mine = rootOf(d, 'calls_order');
      decoy = rootOf(d, 'decoy_x');
      d.pragma('journal_mode = DELETE');
    });
    expect(Math.max(mine, decoy)).toBeLessThan(128); // one byte in the schema record
    const bytes = readFileSync(t.dbPath);
    const name = Buffer.from('calls_ordercalls');
    for (let i = bytes.indexOf(name); i >= 0; i = bytes.indexOf(name, i + 1))
      if (bytes[i + name.length] === mine) bytes[i + name.length] = decoy;
    writeFileSync(t.dbPath, bytes);
    const listed = auditCli(t.dbPath, 'list');
    expect(listed.out).toContain(shortCallId(calls[0]!));
    expect(listed.out).not.toContain(shortCallId(hidden));
    const r = verify(t.dbPath, file, keyFile);
    expect(r.code, r.out).toBe(1);
    expect(r.err).toMatch(/^database: DAMAGED/m);
    expect(r.err).toMatch(/calls_order/);
  });

  it('escapes control characters in the row keys verify prints (no terminal escapes from the database)', () => {
    closeStore();
    const forged = '\u001b[2K\u001b[1A\rx\nsummary tables: ok\u0007\u009b31m';
    edit((d) => {
      d.exec('CREATE TEMP TABLE one AS SELECT * FROM calls LIMIT 1');
      d.prepare('UPDATE one SET call_id = ?').run(forged);
      d.exec('INSERT INTO calls SELECT * FROM one');
    });
    const r = verify(t.dbPath, file, keyFile);
    expect(r.code).toBe(1);
    expect(r.err).toMatch(/summary tables: 1 DIFFERENCE/);
    // eslint-disable-next-line no-control-regex -- finding control characters is the point
    expect(r.err).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/);
    expect(r.err).toContain('\\u001b[2K');
    expect(r.err).not.toMatch(/^summary tables: ok/m);
  });

  it('refuses new runs when the anchor file cannot be read or written while serving, not just logs it', () => {
    const a = anchoring();
    expect(store.runsRefused()).toBeUndefined();
    rmSync(file);
    mkdirSync(file); // any I/O failure on the anchor file: a folder in its place, a full disk, a read-only mount
    gatedCall(store, startSession(store), sha('c'));
    a.stop(); // the periodic and final anchoring path: errors are caught there
    expect(store.runsRefused()).toMatch(/anchor file/);
  });
});
