import type { Client } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SpawnedServer } from '../http/helpers/spawn-server.js';
import { waitFor } from '../helpers/wait-for.js';
import { startTeam, textOf, tool, type Team } from './helpers/team.js';

// Real `skills-mcp serve --http --audit postgres://…` processes (two replicas) writing one audit log in a real
// PostgreSQL this file starts; real MCP clients. Echo is allowed by a rule (runs without asking); the writer skill
// is asked about (modern era: the retry carries the answer).
const CONFIG =
  'approval:\n  mode: ask\n  rules:\n    - { skill: echo, script: scripts/main.py, action: allow }\n';

let team: Team;
let a: Client;
let b: Client;
let serverA: SpawnedServer;
let serverB: SpawnedServer;

beforeAll(async () => {
  team = await startTeam(CONFIG);
  const [ra, rb] = await Promise.all([team.start('a'), team.start('b')]);
  ({ c: a, s: serverA } = ra);
  ({ c: b, s: serverB } = rb);
}, 60_000);
afterAll(() => team?.cleanup());

describe('serve --http --audit postgres:// (two replicas, one log)', () => {
  it('runs allowed calls on both replicas, each recorded started-before-finished in one chain', async () => {
    const ra = await tool(a, 'echo', { text: 'from a' });
    const rb = await tool(b, 'echo', { text: 'from b' });
    expect(ra.isError, textOf(ra)).toBeFalsy();
    expect(rb.isError, textOf(rb)).toBeFalsy();
    expect(textOf(ra)).toContain('from a');
    expect(textOf(rb)).toContain('from b');
    const ev = await team.events();
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
    const v = team.verify();
    expect(v.code, v.stderr).toBe(0);
    expect(v.stdout).toMatch(new RegExp(`chain: ok, ${ev.length} events`));
  });

  it('asks, and runs the approved call when the modern-era retry comes back to the same replica', async () => {
    const asked = await tool(a, 'writer', {});
    expect(asked.requestState).toBeTypeOf('string');
    const done = await tool(a, 'writer', {}, { state: asked.requestState });
    expect(done.isError, textOf(done)).toBeFalsy();
    const ev = await team.events();
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
    const before = (await team.events()).length;
    team.pg.stop();
    try {
      const r = await tool(b, 'echo', { text: 'while down' });
      expect(r.isError).toBe(true);
      expect(textOf(r)).toMatch(/audit log \(PostgreSQL\): cannot .*: the audit database is unreachable/);
      expect(textOf(r)).toMatch(/Check that PostgreSQL runs and accepts connections/);
      expect(textOf(r)).not.toContain('while down');
      const read = await tool(b, 'read_skill_file', { skill: 'echo', path: 'SKILL.md' });
      expect(read.isError, textOf(read)).toBeFalsy();
      expect(textOf(read)).toContain('Echoes its JSON input back.');
      // Its record, written after the answer, fails: logged, not fatal (as with SQLite).
      await waitFor(
        () => serverB.stderr().includes('could not audit a read-only call'),
        5_000,
        'the failed record to be logged',
      ).catch(() => undefined);
      expect(serverB.stderr()).toContain('could not audit a read-only call');
    } finally {
      team.pg.start();
    }
    const after = await team.events();
    // Nothing of the refused run reached the log.
    expect(after.slice(before).filter((e) => e.type === 'tool_call_started')).toHaveLength(0);
    const again = await tool(b, 'echo', { text: 'after restart' });
    expect(again.isError, textOf(again)).toBeFalsy();
    expect(textOf(again)).toContain('after restart');
    expect(team.verify().code).toBe(0);
  });

  it('ends its sessions in the shared log when a replica stops', async () => {
    serverA.proc.kill('SIGTERM');
    expect(await serverA.exited).toBe(0);
    const ev = await team.events();
    const pidA = serverA.proc.pid;
    const sessionsA = ev
      .filter(
        (e) => e.type === 'session_started' && (e.payload as { owner: { pid: number } }).owner.pid === pidA,
      )
      .map((e) => e.session_id);
    expect(sessionsA.length).toBeGreaterThan(0);
    for (const sid of sessionsA)
      expect(ev.some((e) => e.type === 'session_ended' && e.session_id === sid)).toBe(true);
    expect(team.verify().code).toBe(0);
  });
});
