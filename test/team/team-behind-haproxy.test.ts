import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FORCE_HEADER, SERVED_HEADER } from '../helpers/haproxy.js';
import { BOTH, REPLICAS, startTeamStack, textOf, type TeamStack } from './helpers/team-stack.js';

const initialize = (token: string, to: string) => ({
  method: 'POST',
  headers: {
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
    authorization: `Bearer ${token}`,
    [FORCE_HEADER]: to,
  },
  body: JSON.stringify({
    jsonrpc: '2.0',
    id: 1,
    method: 'initialize',
    params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'probe', version: '1' } },
  }),
});

const b64 = (o: unknown) => Buffer.from(JSON.stringify(o)).toString('base64url');

describe('three replicas behind HAProxy, signed in with a real issuer', () => {
  let s: TeamStack;

  beforeAll(async () => {
    s = await startTeamStack();
  }, 60_000);
  afterAll(async () => {
    await s?.stop();
  }, 30_000);

  it('checks every replica through the balancer, and lets a test force a request to one', async () => {
    for (const name of REPLICAS) {
      const res = await fetch(`${s.haproxy.origin}/healthz`, { headers: { [FORCE_HEADER]: name } });
      expect(res.status).toBe(200);
      expect(res.headers.get(SERVED_HEADER)).toBe(name);
    }
    // Without the header, requests go round-robin.
    const served = new Set<string | null>();
    for (let i = 0; i < 6; i++)
      served.add((await fetch(`${s.haproxy.origin}/healthz`)).headers.get(SERVED_HEADER));
    expect([...served].sort()).toEqual([...REPLICAS]);
  });

  it('refuses expired, wrong-audience, wrong-issuer and unsigned tokens with 401 and a challenge, on every replica', async () => {
    const now = Math.floor(Date.now() / 1000);
    const good = { iss: s.idp.issuer, aud: s.url, sub: 'alice', scope: BOTH, iat: now, exp: now + 600 };
    const real = await s.mint('alice');
    const bad: Record<string, string> = {
      expired: await s.idp.sign({ ...good, iat: now - 7200, exp: now - 3600 }),
      'wrong audience': await s.mint('alice', BOTH, 'https://other.example/mcp'),
      'wrong issuer': await s.idp.sign({ ...good, iss: 'https://evil.example' }),
      'unsigned (alg none)': `${b64({ alg: 'none', typ: 'at+jwt' })}.${real.split('.')[1]}.`,
      're-signed with another key': await s.idp.signWithOtherKey(good),
    };
    s.tokens.push(...Object.values(bad));
    for (const name of REPLICAS) {
      for (const [what, token] of Object.entries(bad)) {
        const res = await fetch(s.url, initialize(token, name));
        expect(res.status, `${what} on ${name}`).toBe(401);
        expect(res.headers.get(SERVED_HEADER)).toBe(name);
        const challenge = res.headers.get('www-authenticate') ?? '';
        expect(challenge, what).toMatch(/^Bearer /);
        expect(challenge, what).toContain('error="invalid_token"');
        expect(challenge, what).toContain(
          `resource_metadata="${s.haproxy.origin}/.well-known/oauth-protected-resource/mcp"`,
        );
      }
      // The issuer's real token for this audience is let in by the same replica.
      expect((await fetch(s.url, initialize(real, name))).status).toBe(200);
    }
  });

  it.each(['legacy', 'auto'] as const)(
    '%s era: a read-only token lists and reads, and a gated call is refused for its missing scope',
    async (era) => {
      const reader = await s.connect(era, await s.mint('reader', 'skills:read'));
      const { tools } = await reader.client.listTools();
      expect(tools.map((t) => t.name)).toEqual(
        expect.arrayContaining(['echo', 'sleeper', 'read_skill_file']),
      );
      const read = await reader.client.callTool({
        name: 'read_skill_file',
        arguments: { skill: 'echo', path: 'SKILL.md' },
      });
      expect(read.isError, textOf(read)).toBeFalsy();
      const refused = await reader.client.callTool({ name: 'echo', arguments: { text: 'hi' } }).then(
        () => 'ran',
        (e: unknown) => String(e),
      );
      expect(refused).toContain('Insufficient scope: required "skills:read skills:run"');
      expect(reader.asked.count).toBe(0);
    },
  );

  it('keeps each 2025-era session on the replica that created it, approvals included', async () => {
    const people = await Promise.all(
      ['alice', 'bob', 'alice'].map(async (p) => s.connect('legacy', await s.mint(p))),
    );
    await Promise.all(
      people.map(async (c, i) => {
        for (let k = 0; k < 8; k++) {
          expect((await c.client.listTools()).tools.length).toBeGreaterThan(0);
          const r = await c.client.callTool({ name: 'echo', arguments: { text: `sticky ${i} ${k}` } });
          expect(r.isError, textOf(r)).toBeFalsy();
          expect(textOf(r)).toContain(`sticky ${i} ${k}`);
        }
      }),
    );
    for (const c of people) {
      expect(c.asked.count).toBe(8);
      expect(c.routing.served.length).toBeGreaterThanOrEqual(17);
      expect(new Set(c.routing.served).size, c.routing.served.join(' ')).toBe(1);
    }
    // Round-robin spread the three sessions: they do not all live on one replica.
    expect(new Set(people.map((c) => c.routing.served[0])).size).toBeGreaterThan(1);
  });

  it('2026-07-28 era: an approval round trip completes when the retry reaches the replica that asked', async () => {
    const alice = await s.connect('auto', await s.mint('alice'), { pin: 'r2' });
    const r = await alice.client.callTool({ name: 'echo', arguments: { text: 'pinned' } });
    expect(r.isError, textOf(r)).toBeFalsy();
    expect(alice.asked.count).toBe(1);
    expect(new Set(alice.routing.served)).toEqual(new Set(['r2']));
  });

  it.each(['legacy', 'auto'] as const)(
    "%s era: Alice's approval for the session does not carry over to Bob on the same replica",
    async (era) => {
      // Both on the replica that holds Alice's grant (today grants live in the replica's memory).
      const alice = await s.connect(era, await s.mint('alice'), {
        decision: 'approved_for_session',
        pin: 'r3',
      });
      const bob = await s.connect(era, await s.mint('bob'), { pin: 'r3' });
      const input = { name: 'echo', arguments: { text: `grant ${era}` } };
      for (let i = 0; i < 3; i++) {
        const r = await alice.client.callTool(input);
        expect(r.isError, textOf(r)).toBeFalsy();
      }
      expect(alice.asked.count).toBe(1);
      const r = await bob.client.callTool(input);
      expect(r.isError, textOf(r)).toBeFalsy();
      expect(bob.asked.count).toBe(1);
      expect(new Set([...alice.routing.served, ...bob.routing.served])).toEqual(new Set(['r3']));
    },
  );

  it('keeps tokens and the state key out of every replica log, the balancer log and the audit logs', async () => {
    await s.stopReplicas();
    const key = Buffer.from(s.stateKey, 'hex');
    const secrets = [
      ...s.tokens,
      ...s.tokens.map((t) => t.split('.')[2]!).filter((sig) => sig.length > 20),
      s.stateKey,
      key.toString('base64'),
    ];
    expect(s.tokens.length).toBeGreaterThan(10);
    const logs = [...s.replicas.map((r) => r.server.stderr()), s.haproxy.log()];
    // The balancer logged the requests (so its log was there to leak into).
    expect(s.haproxy.servedBy().length).toBeGreaterThan(50);
    for (const log of logs) for (const secret of secrets) expect(log).not.toContain(secret);
    let files = 0;
    for (const r of s.replicas) {
      const dir = join(r.auditPath, '..');
      for (const f of readdirSync(dir).filter((n) => n.startsWith('audit'))) {
        const bytes = readFileSync(join(dir, f));
        files++;
        expect(bytes.includes(key), f).toBe(false);
        for (const secret of secrets) expect(bytes.includes(secret), `${r.name}/${f}`).toBe(false);
      }
    }
    expect(files).toBeGreaterThanOrEqual(3);
  });
});
