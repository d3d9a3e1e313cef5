import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { callDetail } from '../../src/console/call-detail-view.js';
import { consoleBase, pendingLinks } from '../console/helpers/console-server.js';
import { postDecision, rawRequest } from '../console/helpers/raw-request.js';
import { freePort } from '../helpers/free-port.js';
import { gatedFixture, type GatedFixture } from '../helpers/gated-fixture.js';
import { waitFor } from '../helpers/wait-for.js';
import { startOidcIssuer, type OidcIssuer } from '../helpers/oidc-issuer.js';
import { connectClient, type Connected, type Era } from '../http/helpers/connect-client.js';
import { servedUrl, spawnCli, type SpawnedServer } from '../http/helpers/spawn-server.js';
import { auditEvents } from '../http/helpers/audit-events.js';

const SCOPES = ['skills:read', 'skills:run'];
const BOTH = 'skills:read skills:run';

const initialize = (token?: string) => ({
  method: 'POST',
  headers: {
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
    ...(token === undefined ? {} : { authorization: `Bearer ${token}` }),
  },
  body: JSON.stringify({
    jsonrpc: '2.0',
    id: 1,
    method: 'initialize',
    params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'probe', version: '1' } },
  }),
});

/** A client that answers every approval form with `decision`, counting the forms it was shown. */
async function personClient(url: string, era: Era, token: string, decision = 'approved') {
  const c = await connectClient(url, era, token);
  const asked = { count: 0 };
  c.client.setRequestHandler('elicitation/create', () => {
    asked.count++;
    return Promise.resolve({ action: 'accept', content: { decision } });
  });
  return { ...c, asked };
}

const textOf = (r: { content?: unknown }) =>
  ((r.content as { type: string; text?: string }[] | undefined) ?? []).map((c) => c.text ?? '').join('\n');

describe('sign-in with OAuth: a real issuer, the built binary over HTTP, a real MCP client', () => {
  let idp: OidcIssuer;
  let fx: GatedFixture;
  let server: SpawnedServer;
  let url: string;
  let resource: string;
  const tokens: string[] = [];
  const clients: Connected[] = [];
  const mint = async (person: string, scope = BOTH, aud = resource) => {
    const t = await idp.token(person, scope, aud);
    tokens.push(t);
    return t;
  };

  const start = async (o: { oauth?: string; approval?: string; args?: string[] } = {}) => {
    const port = await freePort();
    resource = `http://127.0.0.1:${port}/mcp`;
    writeFileSync(
      fx.configFile,
      `approval:\n  mode: ask\n${o.approval ?? ''}  rules:\n` +
        '    - { skill: writer, caller: { groups: [ops] }, action: allow }\n' +
        `http:\n  oauth:\n    issuer: ${idp.issuer}\n    resource: ${resource}\n${o.oauth ?? ''}`,
    );
    server = spawnCli(['--http', '--port', String(port), ...fx.args, ...(o.args ?? [])]);
    url = await servedUrl(server);
  };
  const stop = async () => {
    for (const c of clients.splice(0)) await c.client.close().catch(() => undefined);
    server.proc.kill('SIGTERM');
    await server.exited;
  };

  beforeAll(async () => {
    idp = await startOidcIssuer(
      [
        { id: 'alice', groups: ['ops'] },
        { id: 'bob', groups: ['dev'] },
        { id: 'carol', groups: [] },
      ],
      SCOPES,
    );
    fx = gatedFixture('');
    await start();
  });
  afterAll(async () => {
    await stop().catch(() => undefined);
    await idp.close();
    fx.cleanup();
  });

  it('serves the Protected Resource Metadata without a token, at the root and the path-suffixed address', async () => {
    const origin = new URL(url).origin;
    const expected = {
      resource,
      authorization_servers: [idp.issuer],
      scopes_supported: SCOPES,
      bearer_methods_supported: ['header'],
      resource_name: 'skills-mcp',
    };
    for (const path of [
      '/.well-known/oauth-protected-resource',
      '/.well-known/oauth-protected-resource/mcp',
    ]) {
      const res = await fetch(`${origin}${path}`);
      expect(res.status).toBe(200);
      expect(await res.json()).toEqual(expected);
    }
  });

  it('answers a request without a token with 401 and a challenge naming the metadata', async () => {
    const res = await fetch(url, initialize());
    expect(res.status).toBe(401);
    const challenge = res.headers.get('www-authenticate') ?? '';
    expect(challenge).toMatch(/^Bearer /);
    expect(challenge).toContain(
      `resource_metadata="${new URL(url).origin}/.well-known/oauth-protected-resource/mcp"`,
    );
    expect(challenge).not.toContain('error=');
  });

  it('refuses expired, wrong-audience, wrong-issuer, unsigned, HMAC and re-signed tokens with 401 invalid_token', async () => {
    const now = Math.floor(Date.now() / 1000);
    const good = { iss: idp.issuer, aud: resource, sub: 'alice', scope: BOTH, iat: now, exp: now + 600 };
    const real = await mint('alice');
    const [header, payload] = real.split('.') as [string, string];
    const b64 = (o: unknown) => Buffer.from(JSON.stringify(o)).toString('base64url');
    const bad: Record<string, string> = {
      expired: await idp.sign({ ...good, iat: now - 7200, exp: now - 3600 }),
      'wrong audience': await mint('alice', BOTH, 'https://other.example/mcp'),
      'wrong issuer': await idp.sign({ ...good, iss: 'https://evil.example' }),
      'unsigned (alg none)': `${b64({ alg: 'none', typ: 'at+jwt' })}.${payload}.`,
      're-signed with another key': await idp.signWithOtherKey(good),
      'HMAC-signed (HS256)': await new SignJWT(good)
        .setProtectedHeader({ alg: 'HS256', typ: 'at+jwt' })
        .sign(new TextEncoder().encode('a-shared-secret-of-32-bytes-0000')),
      'signature of another token': `${header}.${b64({ ...good, sub: 'mallory' })}.${real.split('.')[2]}`,
    };
    tokens.push(...Object.values(bad));
    for (const [what, token] of Object.entries(bad)) {
      const res = await fetch(url, initialize(token));
      expect(res.status, what).toBe(401);
      const challenge = res.headers.get('www-authenticate') ?? '';
      expect(challenge, what).toContain('error="invalid_token"');
      expect(challenge, what).toContain('resource_metadata="');
    }
    // The same claims, signed by the issuer, are let in: each refusal above is the one check that failed.
    expect((await fetch(url, initialize(await idp.sign(good)))).status).toBe(200);
  });

  it.each(['legacy', 'auto'] as const)(
    '%s era: a token with only skills:read lists and reads, and a gated call gets a 403 scope challenge',
    async (era) => {
      const reader = await personClient(url, era, await mint('alice', 'skills:read'));
      clients.push(reader);
      const { tools } = await reader.client.listTools();
      expect(tools.map((t) => t.name)).toContain('echo');
      const read = await reader.client.callTool({
        name: 'read_skill_file',
        arguments: { skill: 'echo', path: 'SKILL.md' },
      });
      expect(read.isError).toBeFalsy();
      const refused = await reader.client.callTool({ name: 'echo', arguments: { text: 'hi' } }).then(
        () => 'ran',
        (e: unknown) => String(e),
      );
      expect(refused).toContain('Insufficient scope: required "skills:read skills:run"');
      expect(reader.asked.count).toBe(0);
    },
  );

  it('names the missing scope in the 403 challenge', async () => {
    const readOnly = await mint('alice', 'skills:read');
    const init = await fetch(url, initialize(readOnly));
    const sid = init.headers.get('mcp-session-id')!;
    const headers = {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      authorization: `Bearer ${readOnly}`,
      'mcp-session-id': sid,
      'mcp-protocol-version': '2025-11-25',
    };
    await fetch(url, {
      method: 'POST',
      headers,
      body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }),
    });
    const call = await fetch(url, {
      method: 'POST',
      headers,
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 2,
        method: 'tools/call',
        params: { name: 'echo', arguments: {} },
      }),
    });
    expect(call.status).toBe(403);
    const challenge = call.headers.get('www-authenticate') ?? '';
    expect(challenge).toContain('error="insufficient_scope"');
    expect(challenge).toContain('scope="skills:read skills:run"');
    // A token without the read scope reaches nothing at all.
    const runOnly = await fetch(url, initialize(await mint('alice', 'skills:run')));
    expect(runOnly.status).toBe(403);
    expect(runOnly.headers.get('www-authenticate')).toContain('scope="skills:read"');
  });

  it.each(['auto', 'legacy'] as const)(
    "%s era: Alice's approval for the session does not carry over to Bob, who is asked again",
    async (era) => {
      const alice = await personClient(url, era, await mint('alice'), 'approved_for_session');
      const bob = await personClient(url, era, await mint('bob'), 'approved');
      clients.push(alice, bob);
      const input = { name: 'echo', arguments: { text: `grant ${era}` } };
      for (let i = 0; i < 2; i++) {
        const r = await alice.client.callTool(input);
        expect(r.isError, textOf(r)).toBeFalsy();
      }
      expect(alice.asked.count).toBe(1);
      const r = await bob.client.callTool(input);
      expect(r.isError, textOf(r)).toBeFalsy();
      expect(bob.asked.count).toBe(1);
    },
  );

  it("Carol's \"deny and stop\" stops Carol's runs, not Bob's", async () => {
    const carol = await personClient(url, 'auto', await mint('carol'), 'abort');
    const bob = await personClient(url, 'auto', await mint('bob'), 'approved');
    clients.push(carol, bob);
    const input = { name: 'echo', arguments: { text: 'stop' } };
    expect((await carol.client.callTool(input)).isError).toBe(true);
    const again = await carol.client.callTool({ name: 'echo', arguments: { text: 'other input' } });
    expect(again.isError).toBe(true);
    expect(carol.asked.count).toBe(1);
    const r = await bob.client.callTool(input);
    expect(r.isError, textOf(r)).toBeFalsy();
    expect(bob.asked.count).toBe(1);
  });

  it("answers Alice's older-era session to Alice's tokens only", async () => {
    const aliceToken = await mint('alice');
    const sid = (await fetch(url, initialize(aliceToken))).headers.get('mcp-session-id')!;
    const list = (token: string) =>
      fetch(url, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          authorization: `Bearer ${token}`,
          'mcp-session-id': sid,
          'mcp-protocol-version': '2025-11-25',
        },
        body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list' }),
      });
    expect((await list(await mint('bob'))).status).toBe(404);
    // Another token of Alice's (here: narrower) is still Alice.
    expect((await list(await mint('alice', 'skills:read'))).status).toBe(200);
  });

  it("a rule for Alice's group runs her call without asking, and not Bob's", async () => {
    const alice = await personClient(url, 'auto', await mint('alice'));
    const bob = await personClient(url, 'auto', await mint('bob'), 'denied');
    clients.push(alice, bob);
    const mine = await alice.client.callTool({ name: 'writer', arguments: {} });
    expect(mine.isError, textOf(mine)).toBeFalsy();
    expect(alice.asked.count).toBe(0);
    const his = await bob.client.callTool({ name: 'writer', arguments: {} });
    expect(his.isError).toBe(true);
    expect(bob.asked.count).toBe(1);
  });

  it('records who called and who approved, and keeps every token out of the log and the audit files', async () => {
    await stop();
    const events = auditEvents(fx.auditPath);
    const alice = { issuer: idp.issuer, subject: 'alice' };
    const sessions = events.filter((e) => e.type === 'session_started');
    expect(sessions.map((e) => e.payload.caller)).toContainEqual(alice);
    expect(sessions.map((e) => e.payload.caller)).toContainEqual({ issuer: idp.issuer, subject: 'bob' });
    const calls = events.filter((e) => e.type === 'tool_call_requested' && e.payload.tool === 'writer');
    expect(calls.map((e) => e.payload.caller)).toEqual([alice, { issuer: idp.issuer, subject: 'bob' }]);
    const decided = events.filter((e) => e.type === 'approval_decided');
    expect(decided).toContainEqual(
      expect.objectContaining({
        payload: expect.objectContaining({
          decision: 'approved_for_session',
          approver: { kind: 'caller', caller: alice },
        }) as unknown,
      }),
    );
    // The group rule decided Alice's writer call: no approver.
    const ruled = decided.find((e) => e.call_id === calls[0]!.call_id);
    expect(ruled?.payload).toMatchObject({ decision: 'approved', reason: 'rules' });
    expect(ruled?.payload.approver).toBeUndefined();
    // The console's call pages show the caller, and who answered.
    const audit = fx.audit();
    try {
      const page = (id: string) => callDetail(audit.getCall(id)!, '/console').toString();
      expect(page(calls[0]!.call_id!)).toMatch(/<dt>Caller<\/dt>\s*<dd><code[^>]*>alice<\/code>/);
      expect(page(calls[1]!.call_id!)).toMatch(/<dt>Caller<\/dt>\s*<dd><code[^>]*>bob<\/code>/);
      expect(page(calls[1]!.call_id!)).toMatch(/denied[\s\S]*by<\/span> <code[^>]*>bob<\/code>/);
    } finally {
      audit.close();
    }

    const dir = join(fx.auditPath, '..');
    const files = readdirSync(dir)
      .filter((f) => f.startsWith('audit'))
      .map((f) => readFileSync(join(dir, f)).toString('latin1'));
    expect(files.length).toBeGreaterThan(0);
    const signatures = tokens.map((t) => t.split('.')[2]!).filter((s) => s.length > 20);
    for (const t of tokens) {
      expect(server.stderr()).not.toContain(t);
      for (const f of files) expect(f).not.toContain(t);
    }
    for (const s of signatures) {
      expect(server.stderr()).not.toContain(s);
      for (const f of files) expect(f).not.toContain(s);
    }
  });

  it('records only the digest of each subject with hash_subjects', async () => {
    await start({ oauth: '    hash_subjects: true\n' });
    const alice = await personClient(url, 'auto', await mint('alice'));
    clients.push(alice);
    const r = await alice.client.callTool({ name: 'writer', arguments: {} });
    expect(r.isError, textOf(r)).toBeFalsy();
    await stop();
    const digest = '2bd806c97f0e00af1a1fc3328fa763a9269723c8db8fac4f93af71db186d6e90'; // printf %s alice | sha256sum
    const last = auditEvents(fx.auditPath)
      .filter((e) => e.type === 'tool_call_requested')
      .at(-1);
    expect(last?.payload.caller).toEqual({ issuer: idp.issuer, subject_sha256: digest });
  });
  it('shows the caller on the approval console, and records the console as the approver', async () => {
    await start({
      approval: '  console: true\n  console_open_browser: false\n  console_wait_ms: 20000\n',
      args: ['--no-elicitation'],
    });
    const alice = await personClient(url, 'auto', await mint('alice'));
    clients.push(alice);
    const pending = alice.client.callTool({ name: 'echo', arguments: { text: 'via console' } });
    await waitFor(() => server.stderr().includes('approval console ready'), 10_000, 'the console');
    const base = consoleBase(fx.auditPath);
    const link = await waitFor(async () => (await pendingLinks(base))[0], 10_000, 'the call on the console');
    expect((await rawRequest(link)).body).toMatch(/by <code>alice<\/code>/);
    expect((await postDecision(link, 'approved')).status).toBe(303);
    const r = await pending;
    expect(r.isError, textOf(r)).toBeFalsy();
    expect(alice.asked.count).toBe(0);
    await stop();
    const decided = auditEvents(fx.auditPath)
      .filter((e) => e.type === 'approval_decided')
      .at(-1);
    expect(decided?.payload).toMatchObject({ channel: 'console', approver: { kind: 'console' } });
  });
});
