import { readFileSync } from 'node:fs';
import type { Client } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTeam, textOf, tool, type Team } from './helpers/team.js';

// Replica A asks a call in the client's form; the model sends the retry, with its own "approved", to replica B,
// whose configuration needs a passkey for it (a rolling change of `approval.require`). B holds it to its
// requirement, as A would have held its own: the client's answer approves nothing that needs a passkey.
let team: Team;
const replicas: Partial<Record<'a' | 'b', Client>> = {};

/** The team's config file with every approval needing a passkey. */
const requiringPasskeys = (t: Team) =>
  readFileSync(t.fx.configFile, 'utf8').replace('approval:\n', 'approval:\n  require: passkey\n');

beforeAll(async () => {
  team = await startTeam('approval:\n  mode: ask\n');
  expect(requiringPasskeys(team)).toContain('require: passkey');
  replicas.a = (await team.start('a')).c;
  replicas.b = (await team.start('b', undefined, { config: requiringPasskeys(team) })).c;
}, 60_000);
afterAll(() => team?.cleanup());

describe('a retry on another replica that needs a passkey there (PostgreSQL log)', () => {
  it("refuses on B the client's own approval of a call asked on A, and runs nothing", async () => {
    const input = { text: 'unapproved' };
    const asked = await tool(replicas.a!, 'echo', input);
    expect(asked.requestState).toBeTypeOf('string');
    const callId = (await team.events()).findLast((e) => e.type === 'approval_requested')!.call_id!;
    const retried = await tool(replicas.b!, 'echo', input, { state: asked.requestState });
    expect(retried.isError, textOf(retried)).toBe(true);
    expect(textOf(retried)).not.toContain('"unapproved"');
    const events = (await team.events()).filter((e) => e.call_id === callId);
    expect(events.map((e) => e.type)).not.toContain('tool_call_started');
    expect(events.find((e) => e.type === 'approval_decided')?.payload).toMatchObject({
      decision: 'denied',
      reason: 'passkey_required',
    });
  }, 60_000);
});
