import type { Client } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTeam, textOf, tool, type Team } from './helpers/team.js';

// An approval covers the grants the person was shown, the operator's included: a modern-era approval asked on a
// replica with one `skill_overrides` is not run by a replica whose override differs (its key differs), and is run by
// one whose override is the same.
const A = 'approval:\n  mode: ask\nskill_overrides:\n  echo: { network: none, profile: strict }\n';
const B = 'approval:\n  mode: ask\nskill_overrides:\n  echo: { network: full }\n';

let team: Team;
let a: Client;
let b: Client;
let same: Client;

beforeAll(async () => {
  team = await startTeam(A);
  [a, b, same] = (
    await Promise.all([team.start('a'), team.start('b', undefined, { config: B }), team.start('same')])
  ).map((r) => r.c) as [Client, Client, Client];
}, 60_000);
afterAll(() => team?.cleanup());

describe('an approval and a changed operator override (PostgreSQL log, shared state key)', () => {
  it('does not cover the call on a replica whose override differs, and runs on one whose override is the same', async () => {
    const args = { text: 'under override A' };
    const asked = await tool(a, 'echo', args);
    expect(asked.requestState).toBeTypeOf('string');
    const ev = await team.events();
    const callId = ev.findLast((e) => e.type === 'approval_requested')!.call_id!;

    const other = await tool(b, 'echo', args, { state: asked.requestState });
    expect(other.isError).toBe(true);
    expect(textOf(other)).toContain('does not match the call it continues');

    const ran = await tool(same, 'echo', args, { state: asked.requestState });
    expect(ran.isError, textOf(ran)).toBeFalsy();
    expect(textOf(ran)).toContain('under override A');
    const events = (await team.events()).filter((e) => e.call_id === callId);
    expect(events.filter((e) => e.type === 'tool_call_started')).toHaveLength(1);
    expect(events.find((e) => e.type === 'tool_call_started')?.payload).toMatchObject({
      sandbox: { network: 'none', profile: 'strict' },
    });
  });
});
