import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeTestSkill } from '../helpers/gated-fixture.js';
import { waitFor } from '../helpers/wait-for.js';
import { startTeam, textOf, tool, type Team } from './helpers/team.js';

// A replica that is only stalled (SIGSTOP, sent by this test to the server it spawned), not dead, while its
// sandboxed script runs. The peer's sweep closes its sessions once the lease (1 s) runs out and records the call
// interrupted with reason lease_expired (outcome unknown). When the replica resumes it finds its lease lost and
// kills the script before it registers again: the canary the script would leave at its end stays absent.
const CONFIG =
  'approval:\n  mode: ask\n  rules:\n' +
  '    - { skill: echo, script: scripts/main.py, action: allow }\n' +
  '    - { skill: slowcanary, script: scripts/main.py, action: allow }\n' +
  'audit_lease:\n  heartbeat_ms: 200\n  lease_ms: 1000\n';

let team: Team;

/** Files named `name` anywhere in a replica's call folders. */
function found(replica: string, name: string): string[] {
  const runs = join(team.fx.dir, `state-${replica}`, 'skills-mcp', 'runs');
  if (!existsSync(runs)) return [];
  return readdirSync(runs, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile() && e.name === name)
    .map((e) => join(e.parentPath, e.name));
}

beforeAll(async () => {
  team = await startTeam(CONFIG);
  writeTestSkill(team.fx.skills, 'slowcanary', {
    description: 'Sleeps, then leaves a canary file. Use in tests.',
    script:
      '#!/usr/bin/env python3\nimport os, time\n' +
      'open(os.path.join(os.environ["SKILL_FILES_DIR"], "started.txt"), "w").write("started")\ntime.sleep(6)\n' +
      'open(os.path.join(os.environ["SKILL_FILES_DIR"], "canary.txt"), "w").write("ran to the end")\nprint("{}")\n',
    executable: true,
  });
}, 60_000);
afterAll(async () => {
  for (const s of team?.servers ?? []) if (s.proc.exitCode === null) s.proc.kill('SIGCONT');
  await team?.cleanup('SIGKILL');
});

describe('a stalled replica whose lease expires while its script runs (PostgreSQL log)', () => {
  it('records the call interrupted as lease_expired and kills the script when it resumes', async () => {
    const [a] = await Promise.all([team.start('a'), team.start('b')]);
    const running = tool(a.c, 'slowcanary', {}).catch((e: unknown) => e);
    let ev = await team.eventsWhen(
      'the call to start',
      (x) => x.some((e) => e.type === 'tool_call_started'),
      15_000,
    );
    const started = ev.find((e) => e.type === 'tool_call_started')!;
    expect(started).toBeDefined();
    await waitFor(() => found('a', 'started.txt').length > 0, 10_000, 'the script to start');
    a.s.proc.kill('SIGSTOP');
    try {
      ev = await team.eventsWhen(
        'the call to be interrupted',
        (x) => x.some((e) => e.type === 'tool_call_interrupted' && e.call_id === started.call_id),
        10_000,
      );
    } finally {
      a.s.proc.kill('SIGCONT');
    }
    const interrupted = ev.find((e) => e.type === 'tool_call_interrupted' && e.call_id === started.call_id);
    expect(interrupted?.payload).toEqual({ reason: 'lease_expired', stage: 'started' });
    const r = await running;
    expect((r as { isError?: boolean }).isError, textOf(r as never)).toBe(true);
    await new Promise((res) => setTimeout(res, 6_500)); // past the script's own end
    expect(found('a', 'canary.txt'), 'the script was killed when A found its lease lost').toHaveLength(0);
    expect(team.verify().code).toBe(0);
  }, 60_000);
});
