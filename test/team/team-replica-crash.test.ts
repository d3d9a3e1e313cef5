import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSharedAudit, type SharedAudit } from './helpers/shared-audit.js';
import { waitFor } from '../helpers/wait-for.js';
import { REPLICAS, startTeamStack, textOf, type ReplicaName, type TeamStack } from './helpers/team-stack.js';
import { trials } from '../helpers/trials.js';

const TRIALS = trials(20);

describe('a replica killed behind HAProxy while it runs a call (one PostgreSQL audit log)', () => {
  let a: SharedAudit;
  let s: TeamStack;

  beforeAll(async () => {
    a = await startSharedAudit();
    s = await startTeamStack({
      ...a.stack,
      // A killed replica's lease expires within a second, and a peer closes what it left open.
      config: 'audit_lease:\n  heartbeat_ms: 200\n  lease_ms: 2000\n',
    });
  }, 60_000);
  afterAll(async () => {
    await s?.stop();
    a?.cleanup();
  }, 30_000);

  it(`records each call as interrupted (${TRIALS} SIGKILLs), while the other replicas keep serving`, async () => {
    const token = await s.mint('bob');
    const restarting = new Map<ReplicaName, Promise<void>>();
    const calls: string[] = [];
    for (let i = 0; i < TRIALS; i++) {
      const victim: ReplicaName = REPLICAS[i % 3]!;
      const other: ReplicaName = REPLICAS[(i + 1) % 3]!;
      await restarting.get(victim);
      await restarting.get(other);
      const last = (await a.rows()).at(-1)?.event_id ?? '0';
      const bob = await s.connect('auto', token, { pin: victim });
      const call = bob.client.callTool({ name: 'sleeper', arguments: { seconds: 60 } }).then(
        (r) => `answered: ${textOf(r)}`,
        (e: unknown) => `failed: ${String(e)}`,
      );
      // Killed as soon as its run is recorded as started.
      const started = await waitFor(
        async () => (await a.rows(`type = 'tool_call_started' AND event_id > $1`, [last])).at(0),
        15_000,
        'tool_call_started',
      );
      calls.push(started.call_id!);

      s.replicas.find((r) => r.name === victim)!.server.proc.kill('SIGKILL');
      expect(await call).not.toMatch(/slept/);
      // Another replica answers at once; the killed one is started again meanwhile.
      restarting.set(victim, s.restart(victim));
      const probe = await s.connect('auto', token, { pin: other });
      const read = await probe.client.callTool({
        name: 'read_skill_file',
        arguments: { skill: 'sleeper', path: 'SKILL.md' },
      });
      expect(read.isError, textOf(read)).toBeFalsy();
      expect(probe.routing.served.at(-1)).toBe(other);
    }
    await Promise.all(restarting.values());
    // Each killed call ends interrupted, and only that.
    const ends = await waitFor(
      async () => {
        const ev = await a.rows(
          `call_id = ANY($1) AND type IN ('tool_call_interrupted', 'tool_call_finished')`,
          [calls],
        );
        return ev.length >= TRIALS ? ev : undefined;
      },
      15_000,
      'every killed call to end',
    );
    expect(new Set(calls).size).toBe(TRIALS);
    expect(ends.map((e) => e.type)).toEqual(Array<string>(TRIALS).fill('tool_call_interrupted'));
    expect(new Set(ends.map((e) => e.call_id))).toEqual(new Set(calls));
    const v = a.verify();
    expect(v.code, v.stderr).toBe(0);
    expect(v.stdout).toMatch(/ok\n$/);
  }, 80_000);
});
