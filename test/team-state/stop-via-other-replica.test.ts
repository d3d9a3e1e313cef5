import type { Client } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTeam, textOf, tool, type Raw, type Team } from './helpers/team.js';

// "Deny and stop" given in the retry that reaches replica B for a call replica A asked: B records the decision and
// session_aborted under A's audit session (the call's own). A reads that stop (gateEventsOf includes its own audit
// session): the call granted for the session before the stop is refused on A too, and nothing more runs.
let team: Team;
let a: Client;
let b: Client;

const lastAsked = async (r: Raw) => {
  expect(r.requestState, textOf(r)).toBeTypeOf('string');
  return (await team.events()).findLast((e) => e.type === 'approval_requested')!.call_id!;
};

beforeAll(async () => {
  team = await startTeam('approval:\n  mode: ask\n');
  [a, b] = (await Promise.all([team.start('a'), team.start('b')])).map((r) => r.c) as [Client, Client];
}, 60_000);
afterAll(() => team?.cleanup());

describe('a stop answered on B for a call asked on A (PostgreSQL log)', () => {
  it('refuses on A the call granted before the stop, and runs nothing there', async () => {
    const g = await tool(a, 'echo', { text: 'granted' });
    await lastAsked(g);
    const granted = await tool(
      a,
      'echo',
      { text: 'granted' },
      { state: g.requestState, decision: 'approved_for_session' },
    );
    expect(granted.isError, textOf(granted)).toBeFalsy();
    const s = await tool(a, 'echo', { text: 'stop here' });
    const callId = await lastAsked(s);
    const stopped = await tool(
      b,
      'echo',
      { text: 'stop here' },
      { state: s.requestState, decision: 'abort' },
    );
    expect(stopped.isError, textOf(stopped)).toBe(true);
    const ev = await team.events();
    expect(ev.find((e) => e.type === 'session_aborted' && e.call_id === callId)).toBeDefined();

    const onB = await tool(b, 'echo', { text: 'granted' });
    expect(onB.isError).toBe(true);
    const before = (await team.events()).length;
    const onA = await tool(a, 'echo', { text: 'granted' });
    expect(onA.isError, textOf(onA)).toBe(true);
    expect(textOf(onA)).toContain('The user stopped all skill runs');
    const fresh = await tool(a, 'echo', { text: 'a new call' });
    expect(fresh.isError, textOf(fresh)).toBe(true);
    expect(fresh.requestState).toBeUndefined();
    const after = (await team.events()).slice(before);
    expect(after.some((e) => e.type === 'tool_call_started')).toBe(false);
  }, 60_000);
});
