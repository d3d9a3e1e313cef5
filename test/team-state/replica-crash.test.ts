import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ExportedEvent } from '../../src/audit/parse-event-row.js';
import { writeTestSkill } from '../helpers/gated-fixture.js';
import { startTeam, textOf, tool, type Team } from './helpers/team.js';

// Crash recovery with a shared PostgreSQL log: real server processes SIGKILLed mid-run. A peer whose sweep finds
// the dead one's lease expired (200 ms heartbeat, 1 s lease here) marks its open calls interrupted, denies its
// pending approvals and ends its sessions; a server started afterwards does the same for a replica that died alone.
const CONFIG =
  'approval:\n  mode: ask\n  rules:\n' +
  '    - { skill: echo, script: scripts/main.py, action: allow }\n' +
  '    - { skill: sleeper, script: scripts/main.py, action: allow }\n' +
  'audit_lease:\n  heartbeat_ms: 200\n  lease_ms: 2000\n';

let team: Team;
type Owner = { owner: { pid: number } };

const sessionsOf = (ev: ExportedEvent[], pid: number | undefined) =>
  ev
    .filter((e) => e.type === 'session_started' && (e.payload as Owner).owner.pid === pid)
    .map((e) => e.session_id);

beforeAll(async () => {
  team = await startTeam(CONFIG);
  writeTestSkill(team.fx.skills, 'sleeper', {
    description: 'Sleeps a few seconds. Use in tests.',
    script: '#!/usr/bin/env python3\nimport time\ntime.sleep(6)\nprint("{}")\n',
    executable: true,
  });
}, 60_000);
afterAll(() => team?.cleanup('SIGKILL'));

describe('a replica killed mid-run (PostgreSQL audit log)', () => {
  it('has its running call interrupted and its pending approval denied by a live peer once its lease expires', async () => {
    const [a, b] = await Promise.all([team.start('a'), team.start('b')]);
    const asked = await tool(a.c, 'writer', {});
    expect(asked.requestState).toBeTypeOf('string');
    const running = tool(a.c, 'sleeper', {}).catch((e: unknown) => e);
    let ev = await team.eventsWhen(
      'the sleeper to start',
      (x) => x.some((e) => e.type === 'tool_call_started'),
      15_000,
    );
    const started = ev.find((e) => e.type === 'tool_call_started');
    expect(started, 'the sleeper started').toBeDefined();
    const pending = ev.find((e) => e.type === 'approval_requested')!;
    const killedAt = Date.now();
    a.s.proc.kill('SIGKILL');
    await a.s.exited;
    await running;
    ev = await team.eventsWhen(
      'the call to be interrupted',
      (x) => x.some((e) => e.type === 'tool_call_interrupted' && e.call_id === started!.call_id),
      10_000,
    );
    const waited = Date.now() - killedAt;
    const interrupted = ev.find((e) => e.type === 'tool_call_interrupted' && e.call_id === started!.call_id);
    expect(interrupted?.payload).toEqual({ reason: 'lease_expired', stage: 'started' });
    // Not before the 2 s lease, counted from A's last heartbeat (at most 200 ms before the kill), ran out.
    expect(waited).toBeGreaterThanOrEqual(1_750);
    const denied = ev.find((e) => e.type === 'approval_decided' && e.call_id === pending.call_id);
    expect(denied?.payload).toMatchObject({ decision: 'denied', reason: 'server_restart' });
    for (const sid of sessionsOf(ev, a.s.proc.pid))
      expect(ev.find((e) => e.type === 'session_ended' && e.session_id === sid)?.payload).toMatchObject({
        reason: 'server_restart',
      });
    // The peer still serves.
    const still = await tool(b.c, 'echo', { text: 'peer alive' });
    expect(still.isError, textOf(still)).toBeFalsy();
    const v = team.verify();
    expect(v.code, v.stderr).toBe(0);
  });

  it('has the sessions of a replica that died alone closed by the next server to start, after the lease', async () => {
    const lone = team.servers.find((s) => s.proc.exitCode === null && s.proc.signalCode === null)!;
    lone.proc.kill('SIGKILL');
    await lone.exited;
    const open = sessionsOf(await team.events(), lone.proc.pid);
    expect(open.length).toBeGreaterThan(0);
    const c = await team.start('c');
    const ev = await team.eventsWhen(
      'the dead replica’s sessions to end',
      (x) => open.every((sid) => x.some((e) => e.type === 'session_ended' && e.session_id === sid)),
      10_000,
    );
    for (const sid of open)
      expect(ev.find((e) => e.type === 'session_ended' && e.session_id === sid)?.payload).toMatchObject({
        reason: 'server_restart',
      });
    const r = await tool(c.c, 'echo', { text: 'after' });
    expect(r.isError, textOf(r)).toBeFalsy();
    expect(team.verify().code).toBe(0);
  });
});
