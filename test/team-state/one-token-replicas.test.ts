import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { ExportedEvent } from '../../src/audit/parse-event-row.js';
import { startTeam, textOf, tool, type Team } from './helpers/team.js';

// Two replicas, one static token, the 2026-07-28 era: every request of that token is one principal, whose session
// id (`http-<principal>`) both replicas serve. Each records it under an audit session of its own, so first calls
// arriving at both at once both start, and when one replica is SIGKILLed the peer that sweeps its expired lease
// closes only the dead one's session and goes on serving in its own (200 ms heartbeat, 2 s lease here).
const CONFIG =
  'approval:\n  mode: ask\n  rules:\n    - { skill: echo, script: scripts/main.py, action: allow }\n' +
  'audit_lease:\n  heartbeat_ms: 200\n  lease_ms: 2000\n';

let team: Team;

beforeAll(async () => {
  team = await startTeam(CONFIG);
}, 60_000);
afterAll(() => team?.cleanup('SIGKILL'), 60_000);

const startedBy = (ev: ExportedEvent[], pid: number | undefined) =>
  ev
    .filter(
      (e) => e.type === 'session_started' && (e.payload as { owner: { pid: number } }).owner.pid === pid,
    )
    .map((e) => e.session_id);

describe('two replicas serving one token in the 2026-07-28 era (PostgreSQL log)', () => {
  it('start the first calls arriving at both at once, and the survivor of a SIGKILL keeps working', async () => {
    const [a, b] = await Promise.all([team.start('a'), team.start('b')]);
    // The first calls of the principal, on both replicas at the same moment.
    const first = await Promise.all([a, b, a, b].map((r, i) => tool(r.c, 'echo', { text: `first ${i}` })));
    expect(first.map((r) => (r.isError === true ? textOf(r) : 'ok'))).toEqual(['ok', 'ok', 'ok', 'ok']);

    let ev = await team.events();
    const ofA = startedBy(ev, a.s.proc.pid);
    const ofB = startedBy(ev, b.s.proc.pid);
    expect(ofA).toHaveLength(1);
    expect(ofB).toHaveLength(1);
    expect(ofA[0]).not.toBe(ofB[0]);

    a.s.proc.kill('SIGKILL');
    await a.s.exited;
    // B's sweep finds A's lease expired and closes A's session.
    await vi.waitFor(
      async () => {
        ev = await team.events();
        expect(ev.some((e) => e.type === 'session_ended' && e.session_id === ofA[0])).toBe(true);
      },
      { timeout: 20_000, interval: 100 },
    );
    expect(ev.find((e) => e.type === 'session_ended' && e.session_id === ofA[0])?.payload).toMatchObject({
      reason: 'server_restart',
    });
    expect(ev.some((e) => e.type === 'session_ended' && e.session_id === ofB[0])).toBe(false);

    const after = await Promise.all([1, 2].map((i) => tool(b.c, 'echo', { text: `after ${i}` })));
    expect(after.map((r) => (r.isError === true ? textOf(r) : 'ok'))).toEqual(['ok', 'ok']);
    expect(team.verify().code).toBe(0);
  }, 90_000);
});
