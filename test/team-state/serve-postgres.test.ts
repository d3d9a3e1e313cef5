import { randomBytes } from 'node:crypto';
import { chmodSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openPgAuditLog } from '../../src/audit/postgres/open-pg-audit-log.js';
import type { ExportedEvent } from '../../src/audit/parse-event-row.js';
import { gatedFixture, type GatedFixture } from '../helpers/gated-fixture.js';
import {
  createAuditDb,
  startTestPostgres,
  type TestAuditDb,
  type TestPostgres,
} from '../helpers/postgres.js';
import { runCli } from '../helpers/run-cli.js';
import { connectClient, type Connected } from '../http/helpers/connect-client.js';
import { servedUrl, spawnCli, type SpawnedServer } from '../http/helpers/spawn-server.js';

// Real `skills-mcp serve --http --audit postgres://…` processes (two replicas) writing one audit log in a real
// PostgreSQL this file starts; real MCP clients. Echo is allowed by a rule (runs without asking); `echo-ask`
// arguments are asked about (modern era: the retry carries the answer).
const TOKEN = 'serve-postgres-test-token-0123456789';
const CONFIG =
  'approval:\n  mode: ask\n  rules:\n    - { skill: echo, script: scripts/main.py, action: allow }\n';

let pgServer: TestPostgres;
let db: TestAuditDb;
let fx: GatedFixture;
let stateKey: string;
const servers: SpawnedServer[] = [];
const clients: Connected[] = [];

type Raw = {
  requestState?: string;
  isError?: boolean;
  content?: { text?: string }[];
  _meta?: Record<string, unknown>;
};
const textOf = (r: Raw) => r.content?.map((x) => x.text ?? '').join('') ?? '';

async function start(name: string, extra: string[] = []): Promise<{ s: SpawnedServer; c: Connected }> {
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
      ...extra,
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

const tool = (c: Client, name: string, args: Record<string, unknown>, more: Record<string, unknown> = {}) =>
  c.request(
    { method: 'tools/call', params: { name, arguments: args, ...more } } as never,
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

const verify = () =>
  runCli(['audit', 'verify', '--audit', db.writerUrl], { env: { PGPASSWORD: db.writer.password } });

let a: Connected;
let b: Connected;
let serverA: SpawnedServer;
let serverB: SpawnedServer;

beforeAll(async () => {
  pgServer = startTestPostgres();
  db = await createAuditDb(pgServer);
  fx = gatedFixture(CONFIG);
  stateKey = join(fx.dir, 'state.key');
  writeFileSync(stateKey, `${randomBytes(32).toString('hex')}\n`, { mode: 0o600 });
  chmodSync(stateKey, 0o600);
  const [ra, rb] = await Promise.all([start('a'), start('b')]);
  a = ra.c;
  b = rb.c;
  serverA = ra.s;
  serverB = rb.s;
}, 60_000);

afterAll(async () => {
  for (const c of clients) await c.client.close().catch(() => undefined);
  for (const s of servers) {
    if (s.proc.exitCode === null && s.proc.signalCode === null) s.proc.kill('SIGTERM');
    await s.exited;
  }
  fx?.cleanup();
  pgServer?.cleanup();
});

describe('serve --http --audit postgres:// (two replicas, one log)', () => {
  it('runs allowed calls on both replicas, each recorded started-before-finished in one chain', async () => {
    const ra = await tool(a.client, 'echo', { text: 'from a' });
    const rb = await tool(b.client, 'echo', { text: 'from b' });
    expect(ra.isError, textOf(ra)).toBeFalsy();
    expect(rb.isError, textOf(rb)).toBeFalsy();
    expect(textOf(ra)).toContain('from a');
    expect(textOf(rb)).toContain('from b');
    const ev = await events();
    const owners = new Set(
      ev
        .filter((e) => e.type === 'session_started')
        .map((e) => (e.payload as { owner: { pid: number } }).owner.pid),
    );
    expect(owners.size).toBe(2);
    const runs = ev.filter((e) => e.type === 'tool_call_started');
    expect(runs).toHaveLength(2);
    for (const r of runs) {
      const mine = ev.filter((e) => e.call_id === r.call_id).map((e) => e.type);
      expect(mine).toEqual([
        'tool_call_requested',
        'policy_decided',
        'approval_decided',
        'tool_call_started',
        'tool_call_finished',
      ]);
    }
    const v = verify();
    expect(v.code, v.stderr).toBe(0);
    expect(v.stdout).toMatch(new RegExp(`chain: ok, ${ev.length} events`));
  });

  it('asks, and runs the approved call when the modern-era retry comes back to the same replica', async () => {
    const first = await tool(a.client, 'echo', { text: 'ask me', note: 'asked' }, {});
    // Allowed by the rule: no question. A call of another skill is asked about.
    expect(first.isError, textOf(first)).toBeFalsy();
    const asked = await tool(a.client, 'writer', {});
    expect(asked.requestState).toBeTypeOf('string');
    const done = await tool(
      a.client,
      'writer',
      {},
      {
        inputResponses: { approval: { action: 'accept', content: { decision: 'approved' } } },
        requestState: asked.requestState,
      },
    );
    expect(done.isError, textOf(done)).toBeFalsy();
    const ev = await events();
    const callId = ev.findLast((e) => e.type === 'approval_requested')!.call_id;
    expect(ev.filter((e) => e.call_id === callId).map((e) => e.type)).toEqual([
      'tool_call_requested',
      'policy_decided',
      'approval_requested',
      'approval_decided',
      'tool_call_started',
      'tool_call_finished',
    ]);
  });

  it('refuses gated runs with a clear error while PostgreSQL is down, still answers read-only tools, and resumes', async () => {
    const before = (await events()).length;
    pgServer.stop();
    try {
      const r = await tool(b.client, 'echo', { text: 'while down' });
      expect(r.isError).toBe(true);
      expect(textOf(r)).toMatch(/audit log \(PostgreSQL\): cannot .*: the audit database is unreachable/);
      expect(textOf(r)).toMatch(/Check that PostgreSQL runs and accepts connections/);
      expect(textOf(r)).not.toContain('while down');
      const read = await tool(b.client, 'read_skill_file', { skill: 'echo', path: 'SKILL.md' });
      expect(read.isError, textOf(read)).toBeFalsy();
      expect(textOf(read)).toContain('Echoes its JSON input back.');
      // Its record, written after the answer, fails: logged, not fatal (as with SQLite).
      for (let i = 0; i < 100 && !serverB.stderr().includes('could not audit a read-only call'); i++)
        await new Promise((r) => setTimeout(r, 50));
      expect(serverB.stderr()).toContain('could not audit a read-only call');
    } finally {
      pgServer.start();
    }
    const after = await events();
    // Nothing of the refused run reached the log (the read-only record, written after its answer, may not either).
    expect(after.slice(before).filter((e) => e.type === 'tool_call_started')).toHaveLength(0);
    const again = await tool(b.client, 'echo', { text: 'after restart' });
    expect(again.isError, textOf(again)).toBeFalsy();
    expect(textOf(again)).toContain('after restart');
    expect(verify().code).toBe(0);
  });

  it('ends its sessions in the shared log when a replica stops', async () => {
    serverA.proc.kill('SIGTERM');
    expect(await serverA.exited).toBe(0);
    const ev = await events();
    const pidA = serverA.proc.pid;
    const sessionsA = ev
      .filter(
        (e) => e.type === 'session_started' && (e.payload as { owner: { pid: number } }).owner.pid === pidA,
      )
      .map((e) => e.session_id);
    expect(sessionsA.length).toBeGreaterThan(0);
    for (const sid of sessionsA)
      expect(ev.some((e) => e.type === 'session_ended' && e.session_id === sid)).toBe(true);
    expect(verify().code).toBe(0);
  });
});
