import { createServer } from 'node:net';
import type { Client } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startOidcIssuer, type OidcIssuer } from '../helpers/oidc-issuer.js';
import { startTeam, textOf, tool, type Team } from './helpers/team.js';

// Two people signed in with a real OAuth issuer, two replicas sharing one PostgreSQL log and state key: what Alice
// approved on replica A is never used for Bob on replica B, and Bob cannot present Alice's pending approval.
const SCOPES = ['skills:read', 'skills:run'];
const freePort = () =>
  new Promise<number>((resolve) => {
    const srv = createServer().listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as { port: number };
      srv.close(() => resolve(port));
    });
  });

let idp: OidcIssuer;
let team: Team;
let aliceA: Client;
let bobB: Client;

beforeAll(async () => {
  idp = await startOidcIssuer(
    [
      { id: 'alice', groups: ['dev'] },
      { id: 'bob', groups: ['dev'] },
    ],
    SCOPES,
  );
  // Both replicas serve one resource (the address a balancer would give them).
  const resource = `http://127.0.0.1:${await freePort()}/mcp`;
  team = await startTeam(
    `approval:\n  mode: ask\nhttp:\n  oauth:\n    issuer: ${idp.issuer}\n    resource: ${resource}\n`,
    { staticToken: false },
  );
  const alice = await idp.token('alice', SCOPES.join(' '), resource);
  const bob = await idp.token('bob', SCOPES.join(' '), resource);
  const [a, b] = await Promise.all([team.start('a', alice), team.start('b', bob)]);
  aliceA = a.c;
  bobB = b.c;
}, 60_000);
afterAll(async () => {
  await team?.cleanup();
  await idp?.close();
});

describe('people across replicas (OAuth, PostgreSQL log)', () => {
  it("does not use Alice's grant (approved on A) for Bob's same call on B: Bob is asked", async () => {
    const args = { text: 'same call' };
    const asked = await tool(aliceA, 'echo', args);
    expect(asked.requestState).toBeTypeOf('string');
    const granted = await tool(aliceA, 'echo', args, {
      state: asked.requestState,
      decision: 'approved_for_session',
    });
    expect(granted.isError, textOf(granted)).toBeFalsy();
    const bob = await tool(bobB, 'echo', args);
    expect(bob.requestState, textOf(bob)).toBeTypeOf('string');
    const ev = await team.events();
    expect(ev.filter((e) => e.type === 'tool_call_started')).toHaveLength(1);
  });

  it("refuses Alice's pending approval presented by Bob on B, and runs nothing", async () => {
    const asked = await tool(aliceA, 'echo', { text: 'only alice' });
    expect(asked.requestState).toBeTypeOf('string');
    const callId = (await team.events()).findLast((e) => e.type === 'approval_requested')!.call_id;
    const stolen = await tool(bobB, 'echo', { text: 'only alice' }, { state: asked.requestState }).then(
      (r) => ({ r }),
      (e: unknown) => ({ e: e as { message?: string } }),
    );
    // Refused either as a state bound to someone else, or as nothing pending for Bob.
    if ('e' in stolen) expect(stolen.e.message).toMatch(/Invalid or expired requestState/);
    else {
      expect(stolen.r.isError).toBe(true);
      expect(textOf(stolen.r)).toMatch(/no longer pending/);
    }
    const ev = await team.events();
    expect(
      ev.some(
        (e) =>
          e.call_id === callId &&
          e.type !== 'tool_call_requested' &&
          e.type !== 'policy_decided' &&
          e.type !== 'approval_requested',
      ),
    ).toBe(false);
  });
});
