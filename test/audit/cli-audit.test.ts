import Database from 'better-sqlite3';
import { createHash } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { shortCallId } from '../../src/audit/call-id.js';
import { canonicalJson } from '../../src/canonical-json.js';
import { runAudit } from '../../src/cli/audit.js';
import type { CliIo } from '../../src/cli/io.js';
import { openAuditStore, type ExportedEvent } from '../../src/audit/index.js';
import { finished, gatedCall, requested, sha, startSession, started } from './helpers/sample-events.js';
import { tempDir } from './helpers/temp-dir.js';

function capture(): CliIo & { stdout: () => string; stderr: () => string } {
  let out = '';
  let err = '';
  return {
    out: (t) => (out += t),
    err: (t) => (err += t),
    env: {},
    cwd: process.cwd(),
    stdinIsTTY: false,
    stdout: () => out,
    stderr: () => err,
  };
}

describe('skills-mcp audit', () => {
  let t: ReturnType<typeof tempDir>;
  let first: string;
  let s1: string;
  const audit = async (...args: string[]) => {
    const io = capture();
    const code = await runAudit(args, io, {
      auditPath: t.dbPath,
      anchors: { file: `${t.dbPath}.anchors`, keyFile: `${t.dir}/audit-anchor.key` },
    });
    return { code, out: io.stdout(), err: io.stderr() };
  };

  beforeEach(() => {
    t = tempDir();
    let n = 0;
    const store = openAuditStore({
      path: t.dbPath,
      newId: () => `${String(++n).padStart(2, '0')}-${sha(String(n)).slice(0, 30)}`,
    });
    s1 = startSession(store);
    const s2 = startSession(store);
    first = gatedCall(store, s1, sha('k'), 1);
    store.appendMany([
      {
        type: 'tool_call_requested',
        sessionId: s2,
        callId: 'ro-call',
        payload: requested({ tool: 'read_skill_file', skill: 'docx', approval_key: null }),
      },
      { type: 'tool_call_finished', sessionId: s2, callId: 'ro-call', payload: finished() },
    ]);
    store.appendMany([
      {
        type: 'tool_call_requested',
        sessionId: s2,
        callId: 'ro-call-2',
        payload: requested({ tool: 'read_skill_file', skill: 'xlsx', approval_key: null }),
      },
      { type: 'tool_call_finished', sessionId: s2, callId: 'ro-call-2', payload: finished() },
    ]);
    store.endSession(s1, 'client_closed');
    store.close();
  });
  afterEach(() => t.cleanup());

  it('prints help, and usage errors exit 2', async () => {
    expect(await audit('--help')).toMatchObject({
      code: 0,
      out: expect.stringContaining('Usage: skills-mcp audit'),
    });
    expect(await audit('verify', '--help')).toMatchObject({
      code: 0,
      out: expect.stringContaining('audit verify'),
    });
    expect((await audit()).code).toBe(2);
    expect(await audit('frobnicate')).toMatchObject({
      code: 2,
      err: expect.stringContaining('unknown audit command'),
    });
    expect(await audit('list', '--bogus')).toMatchObject({ code: 2 });
    expect(await audit('verify', '--skill', 'x')).toMatchObject({
      code: 2,
      err: expect.stringContaining('does not take --skill'),
    });
    expect(await audit('show')).toMatchObject({ code: 2, err: expect.stringContaining('one call id') });
    expect(await audit('list', '--limit', '0')).toMatchObject({ code: 2 });
  });

  it('says clearly when there is no log, and exits 1', async () => {
    t.dbPath = `${t.dir}/missing/audit.db`;
    const r = await audit('verify');
    expect(r.code).toBe(1);
    expect(r.err).toContain(`no audit log at ${t.dir}/missing/audit.db`);
  });

  it('verifies an intact chain', async () => {
    const r = await audit('verify');
    expect(r).toMatchObject({ code: 0, err: '' });
    expect(r.out).toMatch(/^chain: ok, 13 events, head [0-9a-f]{64}\n/);
    expect(r.out).toContain('summary tables: ok');
    expect(JSON.parse((await audit('verify', '--json')).out)).toMatchObject({
      ok: true,
      chain: { ok: true, events: 13 },
    });
  });

  it('exits 1 naming the first bad event when a row was edited', async () => {
    const db = new Database(t.dbPath);
    db.exec(
      'DROP TRIGGER events_no_update; UPDATE events SET payload = replace(payload, \'"valid":true\', \'"valid":false\') WHERE event_id = 3',
    );
    db.close();
    const r = await audit('verify');
    expect(r.code).toBe(1);
    expect(r.err).toContain('chain: BROKEN at event 3 (hash_mismatch)');
    expect(r.err).toContain('the 2 events before it verify');
  });

  it('lists calls, filtered by session and skill', async () => {
    const all = await audit('list');
    expect(all.code).toBe(0);
    expect(all.out).toMatch(/^CALL\s+TIME \(UTC\)\s+SESSION\s+TOOL\s+SKILL\s+STATUS\s+APPROVAL\s+MS\n/);
    expect(all.out).toContain(`${shortCallId(first)}  `);
    expect(all.out).toContain('approved (user)');
    expect(all.out).toMatch(/3 calls\n$/);
    expect((await audit('list', '--session', s1)).out).toMatch(/1 call\n$/);
    const json = JSON.parse((await audit('list', '--skill', 'docx', '--json')).out);
    expect(json).toEqual([
      expect.objectContaining({ callId: 'ro-call', tool: 'read_skill_file', status: 'ok' }),
    ]);
  });

  it('shows a call by id, its short id from the list, or a unique start or end, and refuses an ambiguous one', async () => {
    const r = await audit('show', first.slice(0, 5));
    expect(r.code).toBe(0);
    expect(r.out).toContain(`call      ${first}`);
    expect(r.out).toContain('approval  approved (user) via elicitation');
    expect(r.out).toContain('files/a0.txt');
    expect(r.out).toMatch(/#\d+ {2}\S+ \S+ {2}tool_call_finished/);
    expect(JSON.parse((await audit('show', first, '--json')).out).events).toHaveLength(6);
    expect(await audit('show', 'zz')).toMatchObject({
      code: 1,
      err: expect.stringContaining('no call matches "zz"'),
    });
    expect(await audit('show', 'ro-')).toMatchObject({
      code: 1,
      err: expect.stringContaining('ro-call, ro-call-2 all match'),
    });
    expect((await audit('show', 'ro-call')).out).toContain('call      ro-call\n');
    expect((await audit('show', shortCallId(first))).out).toContain(`call      ${first}\n`);
    expect((await audit('show', 'o-call')).out).toContain('call      ro-call\n');
    expect((await audit('show', 'call-2')).out).toContain('call      ro-call-2\n');
    // An id that starts with what another ends with: neither is taken.
    const store = openAuditStore({ path: t.dbPath });
    store.append({
      type: 'tool_call_requested',
      sessionId: startSession(store),
      callId: 'call-2-x',
      payload: requested(),
    });
    store.close();
    expect(await audit('show', 'call-2')).toMatchObject({
      code: 1,
      err: expect.stringContaining('call-2-x, ro-call-2 all match "call-2"'),
    });
  });

  it('exports JSON lines that an outside tool can verify', async () => {
    const r = await audit('export', '--jsonl');
    expect(r.code).toBe(0);
    const lines = r.out
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l) as ExportedEvent & { record?: string });
    // The events, then record lines (no anchors here: only the summary).
    expect(lines.at(-1)).toEqual({ record: 'export_summary', events: 13, chain: 'ok' });
    lines.pop();
    expect(lines).toHaveLength(13);
    let prev = '0'.repeat(64);
    for (const e of lines) {
      expect(e.prev_hash).toBe(prev);
      const body = canonicalJson({
        event_id: e.event_id,
        ts: e.ts,
        session_id: e.session_id,
        call_id: e.call_id,
        type: e.type,
        payload: e.payload,
      });
      expect(createHash('sha256').update(`${prev}\n${body}`).digest('hex')).toBe(e.hash);
      prev = e.hash;
    }
  });

  it('never writes: an open session of a dead server is shown, not recovered', async () => {
    const crashed = openAuditStore({
      path: t.dbPath,
      owner: { pid: 999_999_999, host: 'h' },
      recover: false,
    });
    const s = startSession(crashed);
    const callId = crashed.append({
      type: 'tool_call_requested',
      sessionId: s,
      payload: requested(),
    }).callId;
    crashed.append({ type: 'tool_call_started', sessionId: s, callId, payload: started() });
    crashed.close();
    expect((await audit('list', '--session', s)).out).toContain('started');
    expect((await audit('export', '--jsonl', '--events-only')).out.trimEnd().split('\n')).toHaveLength(16);
  });
});
