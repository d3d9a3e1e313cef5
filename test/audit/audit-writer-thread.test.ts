import Database from 'better-sqlite3';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { openAuditStore } from '../../src/audit/open-audit-store.js';
import type { AuditEvent } from '../../src/audit/types.js';
import { runCli } from '../helpers/run-cli.js';
import { connectStdio, type Connected } from '../helpers/stdio-client.js';
import { waitFor } from '../helpers/wait-for.js';
import { tempDir } from '../helpers/temp-dir.js';

/** A skill whose run leaves a mark on the host (no sandbox, by the operator's config): proof that it ran. */
const MARKER = `#!/usr/bin/env python3
import json, sys
data = json.load(sys.stdin)
open(data["path"], "w").write("ran")
print(json.dumps({"ok": True}))
`;

const CONFIG =
  'sandbox:\n  mode: off\napproval:\n  mode: allow\n  fallback: rules-only\n  rules:\n    - { skill: marker, action: allow }\n';

interface Fixture {
  dir: string;
  auditPath: string;
  args: string[];
}

function fixture(dir: string): Fixture {
  const skills = join(dir, 'skills');
  mkdirSync(join(skills, 'marker', 'scripts'), { recursive: true });
  writeFileSync(
    join(skills, 'marker', 'SKILL.md'),
    '---\nname: marker\ndescription: Writes a marker file. Use in tests.\nentry_point: scripts/main.py\n' +
      'input_schema:\n  type: object\n  properties:\n    path: { type: string }\n---\n\nMarks.\n',
  );
  writeFileSync(join(skills, 'marker', 'scripts', 'main.py'), MARKER, { mode: 0o755 });
  const config = join(dir, 'skills-mcp.yaml');
  writeFileSync(config, CONFIG);
  const auditPath = join(dir, 'state', 'audit.db');
  const args = [
    '--skills',
    skills,
    '--config',
    config,
    '--audit',
    auditPath,
    '--no-watch',
    '--log-level',
    'warn',
  ];
  return { dir, auditPath, args };
}

const readOnlyCall = (c: Connected) =>
  c.client.callTool({ name: 'read_skill_file', arguments: { skill: 'marker', path: 'SKILL.md' } });

const gatedCall = (c: Connected, path: string) => c.client.callTool({ name: 'marker', arguments: { path } });

const textOf = (r: Awaited<ReturnType<Connected['client']['callTool']>>) =>
  (r.content as { type: string; text?: string }[]).map((p) => p.text ?? '').join('\n');

/** Every event of the log, by call (recovery runs first when `recover`: the killed server's session is closed). */
function eventsByCall(auditPath: string, recover: boolean): Map<string, AuditEvent[]> {
  const store = openAuditStore({ path: auditPath, readOnly: !recover });
  try {
    const byCall = new Map<string, AuditEvent[]>();
    for (const call of store.listCalls()) byCall.set(call.callId, store.getCall(call.callId)!.events);
    return byCall;
  } finally {
    store.close();
  }
}

const typesOf = (events: AuditEvent[]) => events.map((e) => e.type);
const isReadOnly = (events: AuditEvent[]) =>
  events[0]?.type === 'tool_call_requested' &&
  (events[0].payload as { read_only?: boolean }).read_only === true;

describe('the audit log written by its own thread', () => {
  const dirs: (() => void)[] = [];
  const servers: Connected[] = [];
  const start = async (fx: Fixture) => {
    const c = await connectStdio({ era: 'legacy', args: fx.args });
    servers.push(c);
    return c;
  };
  const newFixture = () => {
    const t = tempDir();
    dirs.push(t.cleanup);
    return fixture(t.dir);
  };
  afterEach(async () => {
    for (const c of servers.splice(0)) await c.close().catch(() => undefined);
    for (const cleanup of dirs.splice(0)) cleanup();
  });

  it('keeps every event of a gated call answered right before a SIGKILL, and no record in part', async () => {
    const fx = newFixture();
    const c = await start(fx);
    const before = await Promise.all(Array.from({ length: 8 }, () => readOnlyCall(c)));
    expect(before.every((r) => r.isError !== true)).toBe(true);
    const mark = join(fx.dir, 'ran-before-kill');
    const answered = await gatedCall(c, mark);
    expect(answered.isError).not.toBe(true);
    process.kill(c.transport.pid!, 'SIGKILL');
    await c.close().catch(() => undefined);
    expect(existsSync(mark)).toBe(true);

    // As the log stood when the server died: the gated call is complete, written before its answer.
    const atDeath = eventsByCall(fx.auditPath, false);
    const gated = [...atDeath.values()].filter((events) => !isReadOnly(events));
    expect(gated.map(typesOf)).toEqual([
      [
        'tool_call_requested',
        'policy_decided',
        'approval_decided',
        'tool_call_started',
        'tool_call_finished',
      ],
    ]);
    // Read-only records answered in the last moments may be missing, but never half of one.
    const readOnly = [...atDeath.values()].filter(isReadOnly);
    expect(readOnly.length).toBeLessThanOrEqual(8);
    for (const events of readOnly)
      expect(typesOf(events)).toEqual(['tool_call_requested', 'tool_call_finished']);

    // The next start closes the dead server's session; chain, anchors and summary tables verify.
    const next = await start(fx);
    await readOnlyCall(next);
    await next.close();
    const verified = runCli(['audit', 'verify', '--audit', fx.auditPath]);
    expect(verified.stderr).toBe('');
    expect(verified.code).toBe(0);
    const after = eventsByCall(fx.auditPath, false);
    for (const [callId, events] of atDeath) expect(typesOf(after.get(callId)!)).toEqual(typesOf(events));
  }, 60_000);

  it.each([
    ['SIGTERM', (c: Connected) => process.kill(c.transport.pid!, 'SIGTERM')],
    ['stdin closing', (c: Connected) => void c.close()],
  ])(
    'writes every read-only record when stopped by %s right after the answers',
    async (_how, stop) => {
      const fx = newFixture();
      const c = await start(fx);
      for (let i = 0; i < 5; i++) await readOnlyCall(c);
      const burst = await Promise.all(Array.from({ length: 20 }, () => readOnlyCall(c)));
      expect(burst.every((r) => r.isError !== true)).toBe(true);
      const exited = new Promise((r) => (c.transport.onclose = () => r(undefined)));
      stop(c);
      await exited;
      await c.close().catch(() => undefined);
      const calls = [...eventsByCall(fx.auditPath, false).values()];
      expect(calls).toHaveLength(25);
      for (const events of calls)
        expect(typesOf(events)).toEqual(['tool_call_requested', 'tool_call_finished']);
    },
    60_000,
  );

  it('keeps one chain that `audit verify` accepts after concurrent read-only and gated calls', async () => {
    const fx = newFixture();
    const c = await start(fx);
    const calls = Array.from({ length: 36 }, (_, i) =>
      i % 6 === 0 ? gatedCall(c, join(fx.dir, `ran-${i}`)) : readOnlyCall(c),
    );
    const results = await Promise.all(calls);
    expect(results.filter((r) => r.isError === true).map(textOf)).toEqual([]);
    await c.close();
    const verified = runCli(['audit', 'verify', '--audit', fx.auditPath]);
    expect(verified.stdout).toContain('chain: ok');
    expect(verified.code).toBe(0);
    const byCall = [...eventsByCall(fx.auditPath, false).values()];
    expect(byCall).toHaveLength(36);
    expect(byCall.filter((events) => !isReadOnly(events))).toHaveLength(6);
    for (const events of byCall) expect(typesOf(events).at(-1)).toBe('tool_call_finished');
  }, 60_000);

  it('refuses a gated call whose start cannot be recorded, and runs nothing; read-only tools still answer', async () => {
    const fx = newFixture();
    const c = await start(fx);
    expect((await readOnlyCall(c)).isError).not.toBe(true);
    // Its record (written after the answer) shows the log open, so the trigger below goes into a made schema.
    const recorded = () => {
      try {
        return eventsByCall(fx.auditPath, false).size === 1;
      } catch {
        return false; // not made yet: the writer opens the log with the first call
      }
    };
    await waitFor(recorded, 10_000, 'the first record');
    // Any failure of the write (a full disk, an I/O error): here the database itself refuses the event.
    const db = new Database(fx.auditPath);
    db.exec(
      "CREATE TRIGGER refuse_starts BEFORE INSERT ON events WHEN NEW.type = 'tool_call_started' " +
        "BEGIN SELECT RAISE(ABORT, 'no space left on device'); END",
    );
    db.close();
    const mark = join(fx.dir, 'must-not-exist');
    const refused = await gatedCall(c, mark);
    expect(refused.isError).toBe(true);
    expect(textOf(refused)).toMatch(/audit write failed/);
    expect(existsSync(mark)).toBe(false);
    expect((await readOnlyCall(c)).isError).not.toBe(true);
    await c.close();
    const started = [...eventsByCall(fx.auditPath, false).values()]
      .flat()
      .filter((e) => e.type === 'tool_call_started');
    expect(started).toEqual([]);
  }, 60_000);
});
