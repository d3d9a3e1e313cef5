import { randomBytes } from 'node:crypto';
import { chmodSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openPgAuditLog } from '../../src/audit/postgres/open-pg-audit-log.js';
import type { ExportedEvent } from '../../src/audit/parse-event-row.js';
import { gatedFixture, writeTestSkill, type GatedFixture } from '../helpers/gated-fixture.js';
import {
  createAuditDb,
  startTestPostgres,
  type TestAuditDb,
  type TestPostgres,
} from '../helpers/postgres.js';
import { runCli } from '../helpers/run-cli.js';
import { connectClient, type Connected } from '../http/helpers/connect-client.js';
import { servedUrl, spawnCli, type SpawnedServer } from '../http/helpers/spawn-server.js';

// Crash recovery with a shared PostgreSQL log: real server processes SIGKILLed mid-run. A peer whose sweep finds
// the dead one's lease expired (200 ms heartbeat, 1 s lease here) marks its open calls interrupted, denies its
// pending approvals and ends its sessions; a server started afterwards does the same for a replica that died alone.
const TOKEN = 'replica-crash-test-token-0123456789';
const CONFIG =
  'approval:\n  mode: ask\n  rules:\n' +
  '    - { skill: echo, script: scripts/main.py, action: allow }\n' +
  '    - { skill: sleeper, script: scripts/main.py, action: allow }\n' +
  'audit_lease:\n  heartbeat_ms: 200\n  lease_ms: 1000\n';

let pgServer: TestPostgres;
let db: TestAuditDb;
let fx: GatedFixture;
let stateKey: string;
const servers: SpawnedServer[] = [];
const clients: Connected[] = [];

type Raw = { requestState?: string; isError?: boolean; content?: { text?: string }[] };
const textOf = (r: Raw) => r.content?.map((x) => x.text ?? '').join('') ?? '';
type Owner = { owner: { pid: number } };

async function start(name: string): Promise<{ s: SpawnedServer; c: Connected }> {
  const s = spawnCli(
    [
      '--http',
      '--port',
      '0',
      '--skills',
      fx.skills,
      '--config',
      fx.configFile,
      '--no-watch',
      '--audit',
      db.writerUrl,
    ],
    {
      SKILLS_MCP_TOKEN: TOKEN,
      SKILLS_MCP_STATE_KEY_FILE: stateKey,
      PGPASSWORD: db.writer.password,
      XDG_STATE_HOME: join(fx.dir, `state-${name}`),
    },
  );
  servers.push(s);
  const c = await connectClient(await servedUrl(s), 'auto', TOKEN);
  clients.push(c);
  return { s, c };
}

const tool = (c: Client, name: string, args: Record<string, unknown>) =>
  c.request(
    { method: 'tools/call', params: { name, arguments: args } } as never,
    { allowInputRequired: true } as never,
  ) as Promise<Raw>;

async function events(): Promise<ExportedEvent[]> {
  const log = openPgAuditLog({ url: db.writerUrl, env: { PGPASSWORD: db.writer.password } });
  try {
    const out: ExportedEvent[] = [];
    for await (const e of log.exportEvents()) out.push(e);
    return out;
  } finally {
    await log.close();
  }
}

/** Polls the log until `found` holds (at most `ms`). */
async function until(found: (ev: ExportedEvent[]) => boolean, ms: number): Promise<ExportedEvent[]> {
  const end = Date.now() + ms;
  for (;;) {
    const ev = await events();
    if (found(ev) || Date.now() > end) return ev;
    await new Promise((r) => setTimeout(r, 100));
  }
}

const sessionsOf = (ev: ExportedEvent[], pid: number | undefined) =>
  ev
    .filter((e) => e.type === 'session_started' && (e.payload as Owner).owner.pid === pid)
    .map((e) => e.session_id);

const verify = () =>
  runCli(['audit', 'verify', '--audit', db.writerUrl], { env: { PGPASSWORD: db.writer.password } });

beforeAll(async () => {
  pgServer = startTestPostgres();
  db = await createAuditDb(pgServer);
  fx = gatedFixture(CONFIG);
  writeTestSkill(fx.skills, 'sleeper', {
    description: 'Sleeps a few seconds. Use in tests.',
    script: '#!/usr/bin/env python3\nimport time\ntime.sleep(6)\nprint("{}")\n',
    executable: true,
  });
  stateKey = join(fx.dir, 'state.key');
  writeFileSync(stateKey, `${randomBytes(32).toString('hex')}\n`, { mode: 0o600 });
  chmodSync(stateKey, 0o600);
}, 60_000);

afterAll(async () => {
  for (const c of clients) await c.client.close().catch(() => undefined);
  for (const s of servers) {
    if (s.proc.exitCode === null && s.proc.signalCode === null) s.proc.kill('SIGKILL');
    await s.exited;
  }
  fx?.cleanup();
  pgServer?.cleanup();
});

describe('a replica killed mid-run (PostgreSQL audit log)', () => {
  it('has its running call interrupted and its pending approval denied by a live peer once its lease expires', async () => {
    const [a, b] = await Promise.all([start('a'), start('b')]);
    const asked = await tool(a.c.client, 'writer', {});
    expect(asked.requestState).toBeTypeOf('string');
    const running = tool(a.c.client, 'sleeper', {}).catch((e: unknown) => e);
    let ev = await until((x) => x.some((e) => e.type === 'tool_call_started'), 15_000);
    const started = ev.find((e) => e.type === 'tool_call_started');
    expect(started, 'the sleeper started').toBeDefined();
    const pending = ev.find((e) => e.type === 'approval_requested')!;
    const killedAt = Date.now();
    a.s.proc.kill('SIGKILL');
    await a.s.exited;
    await running;
    ev = await until(
      (x) => x.some((e) => e.type === 'tool_call_interrupted' && e.call_id === started!.call_id),
      10_000,
    );
    const waited = Date.now() - killedAt;
    const interrupted = ev.find((e) => e.type === 'tool_call_interrupted' && e.call_id === started!.call_id);
    expect(interrupted?.payload).toEqual({ reason: 'server_restart', stage: 'started' });
    // Not before the 1 s lease ran out.
    expect(waited).toBeGreaterThanOrEqual(900);
    const denied = ev.find((e) => e.type === 'approval_decided' && e.call_id === pending.call_id);
    expect(denied?.payload).toMatchObject({ decision: 'denied', reason: 'server_restart' });
    for (const sid of sessionsOf(ev, a.s.proc.pid))
      expect(ev.find((e) => e.type === 'session_ended' && e.session_id === sid)?.payload).toMatchObject({
        reason: 'server_restart',
      });
    // The peer still serves.
    const still = await tool(b.c.client, 'echo', { text: 'peer alive' });
    expect(still.isError, textOf(still)).toBeFalsy();
    const v = verify();
    expect(v.code, v.stderr).toBe(0);
  });

  it('has the sessions of a replica that died alone closed by the next server to start, after the lease', async () => {
    const lone = servers.find((s) => s.proc.exitCode === null && s.proc.signalCode === null)!;
    lone.proc.kill('SIGKILL');
    await lone.exited;
    const open = sessionsOf(await events(), lone.proc.pid);
    expect(open.length).toBeGreaterThan(0);
    const c = await start('c');
    const ev = await until(
      (x) => open.every((sid) => x.some((e) => e.type === 'session_ended' && e.session_id === sid)),
      10_000,
    );
    for (const sid of open)
      expect(ev.find((e) => e.type === 'session_ended' && e.session_id === sid)?.payload).toMatchObject({
        reason: 'server_restart',
      });
    const r = await tool(c.c.client, 'echo', { text: 'after' });
    expect(r.isError, textOf(r)).toBeFalsy();
    expect(verify().code).toBe(0);
  });
});
