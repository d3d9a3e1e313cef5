import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { appendAnchor } from '../../src/audit/anchor-file.js';
import { loadAnchorKey } from '../../src/audit/anchor-key.js';
import { signAnchor } from '../../src/audit/anchor-record.js';
import { GENESIS_HASH, openAuditStore, type AuditStore } from '../../src/audit/index.js';
import { writerKeyOf } from '../../src/cli/audit-path.js';
import { ConfigSchema } from '../../src/config/config-schema.js';
import { verify } from './helpers/anchored-server.js';
import { gatedCall, sha, startSession } from './helpers/sample-events.js';
import { tempDir } from './helpers/temp-dir.js';
import { anchorOnDemand } from './helpers/anchor-on-demand.js';

/** Writer marks with real stores on one SQLite file, judged by the built `audit verify`. */
describe('writer marks: which events a holder of the anchor key wrote', () => {
  let t: ReturnType<typeof tempDir>;
  let file: string;
  let keyFile: string;
  const opened: AuditStore[] = [];
  const open = (withKey: boolean) => {
    const s = openAuditStore({
      path: t.dbPath,
      ...(withKey ? { writerKey: loadAnchorKey(keyFile, { create: true }) } : {}),
    });
    opened.push(s);
    return s;
  };
  const anchor = (store: AuditStore, key?: { key: Buffer; isNew: boolean }) =>
    anchorOnDemand({ store, keyFile, file, ...(key === undefined ? {} : { key }) });
  /** A store opened as `skills-mcp approvers` opens it: the key looked for when it appends. */
  const openAsCommand = () => {
    const s = openAuditStore({ path: t.dbPath, ...writerKeyOf(ConfigSchema.parse({}), t.dbPath) });
    opened.push(s);
    return s;
  };

  beforeEach(() => {
    t = tempDir();
    file = `${t.dbPath}.anchors`;
    keyFile = join(t.dir, 'state', 'audit-anchor.key');
  });
  afterEach(() => {
    for (const s of opened.splice(0)) s.close();
    t.cleanup();
  });

  it('vouches for the interleaved appends of two servers holding the key, and names only those of a third without it', () => {
    const a = open(true);
    const b = open(true);
    const anchoring = [anchor(a), anchor(b)];
    const [sa, sb] = [startSession(a), startSession(b)];
    const forger = open(false);
    const sf = startSession(forger);
    for (const k of ['x', 'y']) {
      gatedCall(a, sa, sha(`a ${k}`));
      gatedCall(b, sb, sha(`b ${k}`));
      anchoring[0]!.anchorNow();
    }
    const first = forger.eventCount() + 1;
    gatedCall(forger, sf, sha('forged'));
    const last = forger.eventCount();
    gatedCall(a, sa, sha('a z'));
    for (const x of anchoring) x.stop();
    const r = verify(t.dbPath, file, keyFile);
    expect(r.code).toBe(1);
    const forgedSession = forger.sessionEvents(sf)[0]!.eventId;
    expect(r.err).toContain(
      `writers: ${1 + last - first + 1} events NOT VOUCHED FOR: ${forgedSession}, ${first}-${last}`,
    );
  });

  it('vouches for what a crashed server appended after its last anchor', () => {
    const a = open(true);
    anchor(a); // never stopped: no anchor after the calls
    const s = startSession(a);
    gatedCall(a, s, sha('before the crash'));
    const r = verify(t.dbPath, file, keyFile);
    expect(r.code, r.err).toBe(0);
    expect(r.out).toMatch(/events 1-\d+ came after the newest anchor: a cut of them would not show yet/);
    expect(r.out).toMatch(/writers: ok, every event is vouched for \(\d+ by writer marks\)/);
  });

  it('keeps a log from before writer marks vouched for by its anchors, and marks from then on', () => {
    // What an older server left: events without marks, and an anchor (no marks_from) of its head at its stop.
    const old = open(false);
    const s = startSession(old);
    gatedCall(old, s, sha('old'));
    old.endSession(s, 'shutdown');
    const events = old.eventCount();
    const key = loadAnchorKey(keyFile, { create: true });
    const legacy = {
      v: 2 as const,
      seq: 1,
      ts: Date.now(),
      events,
      head: old.hashAt(events)!,
      first: old.hashAt(1) ?? GENESIS_HASH,
    };
    old.withWriteLock(() => {
      old.setLastAnchor(JSON.stringify(signAnchor(key, legacy, 'copy')));
      appendAnchor(file, signAnchor(key, legacy));
    });
    const now = open(true);
    const anchoring = anchor(now);
    expect(now.runsRefused()).toBeUndefined();
    gatedCall(now, startSession(now), sha('new'));
    anchoring.stop();
    const r = verify(t.dbPath, file, keyFile);
    expect(r.code, r.err).toBe(0);
    expect(r.out).toContain(`writers: ok, every event is vouched for (events 1-${events} by the anchors,`);
  });

  it('marks the appends of a command opened before the server made its key, once the key is there', () => {
    // `skills-mcp approvers enroll` opened the log first; the server starts while the person is in the browser.
    const cli = openAsCommand();
    const server = open(true);
    const anchoring = anchor(server);
    anchoring.anchorNow();
    gatedCall(cli, startSession(cli), sha('enrolled meanwhile'));
    gatedCall(server, startSession(server), sha('served'));
    anchoring.stop();
    const r = verify(t.dbPath, file, keyFile);
    expect(r.code, r.err).toBe(0);
    expect(r.out).toMatch(/writers: ok, every event is vouched for \(\d+ by writer marks\)/);
  });

  it('accepts what such a command appended before any key existed, when the server first starts', () => {
    const cli = openAsCommand();
    gatedCall(cli, startSession(cli), sha('enrolled before the first start'));
    const before = cli.eventCount();
    // As the server's audit worker does: the key made first (it is new), then the log opened and anchored.
    const key = { key: loadAnchorKey(keyFile, { create: true }), isNew: true };
    const server = openAuditStore({ path: t.dbPath, writerKey: key.key });
    opened.push(server);
    const anchoring = anchor(server, key);
    expect(server.runsRefused()).toBeUndefined();
    gatedCall(server, startSession(server), sha('served'));
    anchoring.stop();
    const r = verify(t.dbPath, file, keyFile);
    expect(r.code, r.err).toBe(0);
    expect(r.out).toContain(`writers: ok, every event is vouched for (events 1-${before} by the anchors,`);
  });
});
