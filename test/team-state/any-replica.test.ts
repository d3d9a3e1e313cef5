import type { Client } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ExportedEvent } from '../../src/audit/parse-event-row.js';
import { startTeam, textOf, tool, runOutputs, type Team } from './helpers/team.js';

// Two real server processes, one PostgreSQL log, one state key: a modern-era (2026-07-28) approval asked on
// replica A is completed by its retry on replica B, which finds the pending approval in the log, claims it by
// recording the decision (one per call) and runs the call re-prepared from the retry's own request.
let team: Team;
let a: Client;
let b: Client;

const echo = (c: Client, args: Record<string, unknown>, retry?: string, decision?: string) =>
  tool(
    c,
    'echo',
    args,
    retry === undefined ? undefined : { state: retry, ...(decision ? { decision } : {}) },
  );

/** The call id of the newest approval asked. */
const lastAsked = async (requestState: string | undefined) => {
  expect(requestState).toBeTypeOf('string');
  return (await team.events()).findLast((e) => e.type === 'approval_requested')!.call_id!;
};
const runsOf = (ev: ExportedEvent[], callId: string) =>
  ev.filter((e) => e.call_id === callId && e.type === 'tool_call_started').length;

const outputs = (replica: string) => runOutputs(team, replica);

beforeAll(async () => {
  team = await startTeam('approval:\n  mode: ask\n');
  [a, b] = (await Promise.all([team.start('a'), team.start('b')])).map((r) => r.c) as [Client, Client];
}, 60_000);
afterAll(() => team?.cleanup());

describe('any replica completes a call another asked (PostgreSQL log, shared state key)', () => {
  it('runs on B the call asked on A, once, in one chain that verifies', async () => {
    // The writer skill leaves a file, so its call folder stays where the run happened.
    const asked = await tool(a, 'writer', { text: 'asked on a' });
    const callId = await lastAsked(asked.requestState);
    const done = await tool(b, 'writer', { text: 'asked on a' }, { state: asked.requestState });
    expect(done.isError, textOf(done)).toBeFalsy();
    expect(JSON.stringify(done)).toContain('out.txt');
    const ev = await team.events();
    expect(ev.filter((e) => e.call_id === callId).map((e) => e.type)).toEqual([
      'tool_call_requested',
      'policy_decided',
      'approval_requested',
      'approval_decided',
      'tool_call_started',
      'tool_call_finished',
    ]);
    // B ran it: the file it wrote is in a call folder of B's, none of A's.
    expect(outputs('b')).toEqual(['out.txt']);
    expect(outputs('a')).toEqual([]);
    // The same retry again, on either replica, runs nothing.
    for (const c of [b, a]) {
      const again = await tool(c, 'writer', { text: 'asked on a' }, { state: asked.requestState });
      expect(again.isError).toBe(true);
      expect(textOf(again)).toMatch(/no longer pending/);
    }
    expect(runsOf(await team.events(), callId)).toBe(1);
    const v = team.verify();
    expect(v.code, v.stderr).toBe(0);
  });

  it('runs a call once when two retries race on B and on A', async () => {
    for (let i = 0; i < 3; i++) {
      const args = { text: `race ${i}` };
      const asked = await echo(a, args);
      const callId = await lastAsked(asked.requestState);
      const [x, y] = await Promise.all([
        echo(b, args, asked.requestState),
        echo(i % 2 === 0 ? b : a, args, asked.requestState),
      ]);
      const ok = [x, y].filter((r) => r.isError !== true);
      expect(ok, JSON.stringify([x, y])).toHaveLength(1);
      const lost = [x, y].find((r) => r.isError === true)!;
      expect(textOf(lost)).toMatch(/no longer pending/);
      expect(runsOf(await team.events(), callId)).toBe(1);
    }
  });

  it('refuses a retry on B whose arguments differ from what the person saw, and runs nothing', async () => {
    const asked = await echo(a, { text: 'what was asked' });
    const callId = await lastAsked(asked.requestState);
    const changed = await echo(b, { text: 'something else' }, asked.requestState);
    expect(changed.isError).toBe(true);
    expect(changed._meta?.['skills-mcp/code']).toBe('RETRY_MISMATCH');
    expect(textOf(changed)).toMatch(/does not match the call it continues/);
    const ev = await team.events();
    expect(runsOf(ev, callId)).toBe(0);
    expect(ev.some((e) => e.call_id === callId && e.type === 'approval_decided')).toBe(false);
    // The genuine retry still completes it.
    const right = await echo(b, { text: 'what was asked' }, asked.requestState);
    expect(right.isError, textOf(right)).toBeFalsy();
    expect(runsOf(await team.events(), callId)).toBe(1);
  });

  it('applies a grant (approve for session) made on A to the same call on B, without asking', async () => {
    const args = { text: 'granted on a' };
    const asked = await echo(a, args);
    await lastAsked(asked.requestState);
    const granted = await echo(a, args, asked.requestState, 'approved_for_session');
    expect(granted.isError, textOf(granted)).toBeFalsy();
    const onB = await echo(b, args);
    expect(onB.requestState).toBeUndefined();
    expect(onB.isError, textOf(onB)).toBeFalsy();
    expect(textOf(onB)).toContain('granted on a');
    // Allowed by the session's grant, recorded as such.
    const ev = await team.events();
    expect(ev.findLast((e) => e.type === 'approval_decided')?.payload).toMatchObject({
      decision: 'approved',
      reason: 'cached',
    });
  });

  it('holds a "deny and stop" made on A on B: later gated calls are refused without asking', async () => {
    const asked = await echo(a, { text: 'stop here' });
    const callId = await lastAsked(asked.requestState);
    const stopped = await echo(a, { text: 'stop here' }, asked.requestState, 'abort');
    expect(stopped.isError).toBe(true);
    const before = (await team.events()).length;
    const onB = await echo(b, { text: 'after the stop' });
    expect(onB.requestState).toBeUndefined();
    expect(onB.isError).toBe(true);
    expect(textOf(onB)).toContain('The user stopped all skill runs in this session.');
    const after = (await team.events()).slice(before);
    expect(after.some((e) => e.type === 'approval_requested' || e.type === 'tool_call_started')).toBe(false);
    expect(runsOf(await team.events(), callId)).toBe(0);
  });
});
