import { copyFileSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadAnchorKey } from '../../src/audit/anchor-key.js';
import { openAuditStore } from '../../src/audit/index.js';
import { auditCli, tamper, verify } from './helpers/anchored-server.js';
import { gatedCall, sha, startSession } from './helpers/sample-events.js';
import { tempDir } from './helpers/temp-dir.js';
import { anchorOnDemand } from './helpers/anchor-on-demand.js';

/** A log of five calls anchored after each (in process, as the server does), exported and verified with the CLI. */
describe('audit export: a broken chain is said, and the anchors go with the events', () => {
  let t: ReturnType<typeof tempDir>;
  let file: string;
  let keyFile: string;
  let events: number;
  let broken: string;
  const lines = (text: string) =>
    text
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);

  beforeAll(() => {
    t = tempDir();
    file = `${t.dbPath}.anchors`;
    keyFile = join(t.dir, 'state', 'audit-anchor.key');
    const store = openAuditStore({ path: t.dbPath, writerKey: loadAnchorKey(keyFile, { create: true }) });
    const anchoring = anchorOnDemand({ store, keyFile, file });
    const s = startSession(store);
    for (const k of ['a', 'b', 'c', 'd', 'e']) {
      gatedCall(store, s, sha(k));
      anchoring.anchorNow();
    }
    anchoring.stop();
    events = store.verify().events;
    store.close();
    // Event 5's payload (a decision) edited in place, not re-hashed: the chain breaks there; the anchors' heads still match.
    broken = join(t.dir, 'broken.db');
    copyFileSync(t.dbPath, broken);
    tamper(broken, (d) => {
      d.prepare(
        `UPDATE events SET payload = replace(payload, '"decision":"approved"', '"decision":"denied"') WHERE event_id = 5`,
      ).run();
    });
  });
  afterAll(() => t.cleanup());

  it('exports the events, then every anchor line, the copy, the writer marks and a summary, as record lines', () => {
    const r = auditCli(t.dbPath, 'export', '--jsonl');
    expect(r.code, r.err).toBe(0);
    expect(r.err).toBe('');
    const out = lines(r.out);
    const ofKind = (k: string) => out.filter((l) => l.record === k);
    expect(out.filter((l) => l.record === undefined)).toHaveLength(events);
    expect(out.slice(0, events).every((l) => typeof l.hash === 'string')).toBe(true);
    const anchorLines = readFileSync(file, 'utf8').trim().split('\n');
    expect(ofKind('anchor')).toHaveLength(anchorLines.length);
    expect(ofKind('anchor').at(-1)).toEqual({
      record: 'anchor',
      line: anchorLines.length,
      ...JSON.parse(anchorLines.at(-1)!),
    });
    expect(ofKind('anchor_copy')).toHaveLength(1);
    expect(ofKind('writer_mark').length).toBeGreaterThan(0);
    expect(out.at(-1)).toEqual({ record: 'export_summary', events, chain: 'ok' });
    const only = auditCli(t.dbPath, 'export', '--jsonl', '--events-only');
    expect(lines(only.out).every((l) => l.record === undefined)).toBe(true);
  });

  it('warns on stderr and exits 1 on a broken chain; --allow-broken exports with exit 0, still warned', () => {
    const r = auditCli(broken, 'export', '--jsonl');
    expect(r.code).toBe(1);
    expect(r.err).toContain(`chain: BROKEN at event 5 (hash_mismatch)`);
    expect(r.err).toContain('--allow-broken');
    expect(lines(r.out).filter((l) => l.record === undefined)).toHaveLength(events);
    expect(lines(r.out).at(-1)).toMatchObject({ record: 'export_summary', chain: 'broken', bad_event_id: 5 });
    const allowed = auditCli(broken, 'export', '--jsonl', '--allow-broken');
    expect(allowed.code).toBe(0);
    expect(allowed.err).toContain('chain: BROKEN at event 5');
  });

  it('counts the log as it is when the chain is broken, not only the events before the break', () => {
    const r = verify(broken, file, keyFile);
    expect(r.code).toBe(1);
    expect(r.err).toContain(`the 4 events before it verify (the log holds ${events})`);
    expect(r.err).not.toMatch(/the log holds 4\b/);
    expect(r.err).not.toMatch(/truncated/);
  });
});
