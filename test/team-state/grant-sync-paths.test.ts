import type { Client } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTeam, textOf, tool, type Team } from './helpers/team.js';

// A grant recorded by the any-replica retry path (B records the decision, signed, in A's audit session) follows the
// principal back to A and on to a third replica C: the person is not asked again. Only the fixture's `echo` runs, in the sandbox.
let team: Team;
let a: Client;
let b: Client;
let c: Client;

const echo = (cl: Client, args: Record<string, unknown>, state?: string, decision?: string) =>
  tool(cl, 'echo', args, state === undefined ? undefined : { state, ...(decision ? { decision } : {}) });

beforeAll(async () => {
  team = await startTeam('approval:\n  mode: ask\n');
  [a, b, c] = (await Promise.all([team.start('a'), team.start('b'), team.start('c')])).map((r) => r.c) as [
    Client,
    Client,
    Client,
  ];
}, 90_000);
afterAll(() => team?.cleanup(), 60_000);

describe('signed grants across replicas', () => {
  it('applies a grant recorded by a retry on B (in A’s audit session) on A and on C', async () => {
    const args = { text: 'granted by a retry on b' };
    const asked = await echo(a, args);
    expect(asked.requestState).toBeTypeOf('string');
    const granted = await echo(b, args, asked.requestState, 'approved_for_session');
    expect(granted.isError, textOf(granted)).toBeFalsy();
    const dec = (await team.events()).findLast((e) => e.type === 'approval_decided')!;
    expect(dec.payload).toMatchObject({ decision: 'approved_for_session' });
    expect(dec.payload).toHaveProperty('mac');
    for (const [name, cl] of [
      ['b', b],
      ['a', a],
      ['c', c],
    ] as const) {
      const again = await echo(cl, args);
      expect(again.requestState, `asked again on ${name}`).toBeUndefined();
      expect(again.isError, textOf(again)).toBeFalsy();
    }
    expect(team.servers.map((s) => s.stderr()).join('\n')).not.toContain('MAC does not verify');
  }, 60_000);
});
