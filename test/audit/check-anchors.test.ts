import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { readAnchorLines } from '../../src/audit/anchor-file.js';
import { loadAnchorKey } from '../../src/audit/anchor-key.js';
import { parseAnchor, signAnchor, type AnchorRecord } from '../../src/audit/anchor-record.js';
import { checkAnchors } from '../../src/audit/check-anchors.js';
import { openAuditStore, type AuditStore } from '../../src/audit/index.js';
import { gatedCall, sha, startSession } from './helpers/sample-events.js';
import { tempDir } from './helpers/temp-dir.js';
import { anchorOnDemand } from './helpers/anchor-on-demand.js';

/** A real store anchored four times (the empty log, then after each of three calls), in process. */
describe('anchor checks: the file and the database copy keep each other honest', () => {
  let t: ReturnType<typeof tempDir>;
  let store: AuditStore;
  let file: string;
  let keyFile: string;
  /** Checks the anchor file's lines and the database copy given, by default those on disk and in the database. */
  const check = (over: { lines?: string[] | undefined; copy?: string | undefined } = {}) =>
    checkAnchors(
      { lines: readAnchorLines(file), copy: store.lastAnchor(), ...over },
      loadAnchorKey(keyFile, { create: false }),
      { events: store.verify().events, hashAt: (id) => store.hashAt(id) },
    );
  const lines = () => readFileSync(file, 'utf8').trim().split('\n');
  const kinds = (c: ReturnType<typeof check>) => c.problems.map((p) => p.kind);

  beforeEach(() => {
    t = tempDir();
    file = `${t.dbPath}.anchors`;
    keyFile = join(t.dir, 'state', 'audit-anchor.key');
    // The server's way: the key first, so that every event the store appends is marked as the key holder's.
    store = openAuditStore({ path: t.dbPath, writerKey: loadAnchorKey(keyFile, { create: true }) });
    const anchoring = anchorOnDemand({ store, keyFile, file });
    const s = startSession(store);
    for (const k of ['a', 'b', 'c']) {
      gatedCall(store, s, sha(k));
      anchoring.anchorNow();
    }
    anchoring.stop();
  });
  afterEach(() => {
    store.close();
    t.cleanup();
  });

  it('numbers the anchors from the empty log on, and keeps a copy of the newest in the database', () => {
    expect(lines().map((l) => (parseAnchor(l) as AnchorRecord).seq)).toEqual([1, 2, 3, 4]);
    expect((parseAnchor(lines()[0]!) as AnchorRecord).events).toBe(0);
    expect((parseAnchor(store.lastAnchor()!) as AnchorRecord).seq).toBe(4);
    expect(check()).toMatchObject({ status: 'ok', matched: 4, latest: { seq: 4 } });
  });

  it('names a line deleted from the middle of the file', () => {
    const l = lines();
    const c = check({ lines: [l[0]!, l[1]!, l[3]!] });
    expect(kinds(c)).toEqual(['lines_deleted']);
    expect(c.problems[0]).toMatchObject({ line: 3, detail: expect.stringContaining('follows #2') });
  });

  it('names lines moved or copied', () => {
    const l = lines();
    expect(kinds(check({ lines: [l[0]!, l[2]!, l[1]!, l[3]!] }))).toContain('out_of_sequence');
    expect(kinds(check({ lines: [...l, l[3]!] }))).toContain('out_of_sequence');
  });

  it('names a file cut from its end, against the copy in the database', () => {
    const c = check({ lines: lines().slice(0, 2) });
    expect(kinds(c)).toEqual(['lines_deleted']);
    expect(c.problems[0]!.detail).toMatch(/the database records anchor #4 .* the file ends at #2/);
  });

  it('allows the file one anchor ahead of the copy (a crash between the append and the commit), not two', () => {
    const key = loadAnchorKey(keyFile, { create: false });
    const copyOf = (line: string) => {
      const { mac: _mac, ...unsigned } = parseAnchor(line) as AnchorRecord;
      return JSON.stringify(signAnchor(key, unsigned, 'copy'));
    };
    expect(check({ copy: copyOf(lines()[2]!) }).status).toBe('ok');
    const behind = check({ copy: copyOf(lines()[1]!) });
    expect(kinds(behind)).toEqual(['copy_behind']);
    expect(behind.problems[0]!.detail).toContain('up to #4');
  });

  it('does not take a line of the file for the database copy: the copy is signed for its own purpose', () => {
    expect(kinds(check({ copy: lines()[3] }))).toEqual(['bad_signature']);
  });

  it('names the copy removed from the database', () => {
    expect(kinds(check({ copy: undefined }))).toEqual(['copy_behind']);
  });

  it('names an emptied and a missing file while the log holds events', () => {
    expect(check({ lines: [] })).toMatchObject({ status: 'tampered', problems: [{ kind: 'missing' }] });
    expect(check({ lines: undefined }).problems[0]!.detail).toMatch(
      /^the anchor file is missing, yet the log holds \d+ events/,
    );
  });

  it('refuses new runs when the file was cut while serving, and writes no anchor then', () => {
    const anchoring = anchorOnDemand({ store, keyFile, file });
    expect(store.runsRefused()).toBeUndefined();
    writeFileSync(file, `${lines().slice(0, 2).join('\n')}\n`);
    gatedCall(store, startSession(store), sha('d'));
    anchoring.anchorNow();
    expect(store.runsRefused()).toMatch(/the anchor file lost anchor #4 while serving/);
    expect(lines()).toHaveLength(2);
    anchoring.stop();
  });

  it('numbers the anchors of two servers sharing one log one after the other', () => {
    const other = openAuditStore({ path: t.dbPath, writerKey: loadAnchorKey(keyFile, { create: false }) });
    try {
      const mine = anchorOnDemand({ store, keyFile, file });
      const theirs = anchorOnDemand({ store: other, keyFile, file });
      const s = startSession(store);
      const o = startSession(other);
      for (const k of ['d', 'e', 'f']) {
        gatedCall(store, s, sha(`mine ${k}`));
        mine.anchorNow();
        gatedCall(other, o, sha(`theirs ${k}`));
        theirs.anchorNow();
      }
      theirs.stop();
      mine.stop();
      expect(lines().map((l) => (parseAnchor(l) as AnchorRecord).seq)).toEqual([
        1, 2, 3, 4, 5, 6, 7, 8, 9, 10,
      ]);
      expect(check()).toMatchObject({ status: 'ok', matched: 10 });
      expect(store.runsRefused()).toBeUndefined();
      expect(other.runsRefused()).toBeUndefined();
    } finally {
      other.close();
    }
  });
});
