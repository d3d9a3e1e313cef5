import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeTestSkill } from '../helpers/gated-fixture.js';
import { startTeam, textOf, tool, type Team } from './helpers/team.js';

// The fence on the lease: a replica whose lease is not fresh (its renewals held up here by a row lock this test
// takes on the replicas table, as a database it cannot reach would) spawns nothing and ends the call with
// AUDIT_LEASE_LOST; once its renewal goes through again, calls run.
const CONFIG =
  'approval:\n  mode: ask\n  rules:\n' +
  '    - { skill: canary, script: scripts/main.py, action: allow }\n' +
  'audit_lease:\n  heartbeat_ms: 200\n  lease_ms: 1000\n';

let team: Team;

const canaries = () => {
  const runs = join(team.fx.dir, 'state-a', 'skills-mcp', 'runs');
  if (!existsSync(runs)) return [];
  return readdirSync(runs, { recursive: true, withFileTypes: true }).filter(
    (e) => e.isFile() && e.name === 'canary.txt',
  );
};
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

beforeAll(async () => {
  team = await startTeam(CONFIG);
  writeTestSkill(team.fx.skills, 'canary', {
    description: 'Leaves a canary file. Use in tests.',
    script:
      '#!/usr/bin/env python3\nimport os\n' +
      'open(os.path.join(os.environ["SKILL_FILES_DIR"], "canary.txt"), "w").write("ran")\nprint("{}")\n',
    executable: true,
  });
}, 60_000);
afterAll(() => team?.cleanup());

describe('a replica whose lease is not fresh (PostgreSQL log)', () => {
  it('spawns nothing and ends the call with AUDIT_LEASE_LOST, and runs again once renewed', async () => {
    const a = await team.start('a');
    await tool(a.c, 'echo', { text: 'registered' });
    const holder = new pg.Client({
      host: team.pg.socketDir,
      user: team.db.writer.user,
      password: team.db.writer.password,
      database: team.db.database,
    });
    await holder.connect();
    let r;
    try {
      await holder.query('BEGIN');
      await holder.query('SELECT 1 FROM skills_mcp.replicas FOR UPDATE');
      await sleep(1_200); // longer than the lease less its margin: A's renewals wait behind the lock
      r = await tool(a.c, 'canary', {});
    } finally {
      await holder.query('COMMIT').catch(() => undefined);
      await holder.end();
    }
    expect(r.isError, textOf(r)).toBe(true);
    expect(textOf(r)).toMatch(/lost touch with the shared audit log/);
    expect(canaries()).toHaveLength(0);
    const ev = await team.events();
    const callId = ev.findLast((e) => e.type === 'tool_call_requested')!.call_id;
    const of = ev.filter((e) => e.call_id === callId).map((e) => e.type);
    expect(of).not.toContain('tool_call_started');
    expect(ev.findLast((e) => e.call_id === callId)).toMatchObject({
      type: 'tool_call_finished',
      payload: { status: 'error', error_code: 'AUDIT_LEASE_LOST' },
    });

    // Once a renewal goes through again, runs are taken again (each refused try spawned nothing).
    let ok = await tool(a.c, 'canary', {});
    for (let i = 0; ok.isError === true && i < 40; i++) {
      expect(textOf(ok)).toMatch(/lost touch with the shared audit log/);
      await sleep(250);
      ok = await tool(a.c, 'canary', {});
    }
    expect(ok.isError, textOf(ok)).toBeFalsy();
    expect(canaries()).toHaveLength(1);
  }, 60_000);
});
