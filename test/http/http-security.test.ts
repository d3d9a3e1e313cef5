import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isSkillsError } from '../../src/errors.js';
import { silentLogger } from '../../src/log.js';
import { serveOverHttp } from '../../src/transport/http/serve-over-http.js';
import { connectClient } from './helpers/connect-client.js';
import { INITIALIZE, MCP_HEADERS, rawRequest } from './helpers/raw-request.js';
import { startHttp, type StartedHttp } from './helpers/start-http.js';

const TOKEN = 'test-token-0123456789abcdef';

describe('bearer token', () => {
  let srv: StartedHttp;
  beforeAll(async () => (srv = await startHttp({ token: TOKEN })));
  afterAll(async () => srv?.stop());

  it('answers 401 with a Bearer challenge when no token is sent', async () => {
    const res = await rawRequest(srv.url, { method: 'POST', headers: MCP_HEADERS, body: INITIALIZE });
    expect(res.status).toBe(401);
    expect(res.headers['www-authenticate']).toMatch(/^Bearer /);
  });

  it('answers 401 to a wrong token, also one that differs only in its last character or length', async () => {
    for (const wrong of ['nope', `${TOKEN.slice(0, -1)}X`, `${TOKEN}0`]) {
      const res = await rawRequest(srv.url, {
        method: 'POST',
        headers: { ...MCP_HEADERS, authorization: `Bearer ${wrong}` },
        body: INITIALIZE,
      });
      expect(res.status).toBe(401);
      expect(res.headers['www-authenticate']).toContain('invalid_token');
      expect(res.body).not.toContain(TOKEN);
    }
  });

  it('answers 401 without resource_metadata (no OAuth here), saying in the body to send the token', async () => {
    const missing = await rawRequest(srv.url, { method: 'POST', headers: MCP_HEADERS, body: INITIALIZE });
    expect(missing.headers['www-authenticate']).toBe('Bearer realm="skills-mcp"');
    expect(JSON.parse(missing.body)).toMatchObject({
      error: {
        message: expect.stringContaining('"Authorization: Bearer <token>"; it takes no OAuth sign-in'),
      },
    });
    const wrong = await rawRequest(srv.url, {
      method: 'POST',
      headers: { ...MCP_HEADERS, authorization: 'Bearer nope' },
      body: INITIALIZE,
    });
    const challenge = String(wrong.headers['www-authenticate']);
    expect(challenge).not.toContain('resource_metadata');
    expect(challenge).toMatch(
      /error="invalid_token", error_description="[^"\\]*Authorization: Bearer [^"\\]*"$/,
    );
    expect(JSON.parse(wrong.body)).toMatchObject({
      error: {
        message: expect.stringContaining(
          "not this server's token: send the token this server was started with",
        ),
      },
    });
  });

  it('tells an OAuth client that tries to register after the 401 to send the token instead', async () => {
    const saved: Record<string, unknown> = {};
    const provider = {
      redirectUrl: 'http://127.0.0.1:1/callback',
      clientMetadata: { client_name: 'oauth-test', redirect_uris: ['http://127.0.0.1:1/callback'] },
      clientInformation: () => undefined,
      saveClientInformation: (i: unknown) => void (saved.client = i),
      tokens: () => undefined,
      saveTokens: (t: unknown) => void (saved.tokens = t),
      redirectToAuthorization: (u: URL) => void (saved.redirect = u.href),
      saveCodeVerifier: (v: string) => void (saved.verifier = v),
      codeVerifier: () => String(saved.verifier),
    };
    const client = new Client(
      { name: 'oauth-test', version: '1.0.0' },
      { versionNegotiation: { mode: 'legacy' } },
    );
    const transport = new StreamableHTTPClientTransport(new URL(srv.url), { authProvider: provider });
    const failed = await client.connect(transport).then(
      () => undefined,
      (e: unknown) => e as Error,
    );
    expect(failed?.message).toContain('Dynamic Client Registration rejected (HTTP 404)');
    expect(failed?.message).toContain('takes no OAuth sign-in or client registration: send the token');
    expect(saved).toEqual({});
    await client.close();
  });

  it('refuses the real client without the token, in both eras', async () => {
    await expect(connectClient(srv.url, 'legacy')).rejects.toThrow(/Unauthorized/);
    await expect(connectClient(srv.url, 'auto')).rejects.toThrow(/HTTP 401/);
  });

  it.each(['legacy', 'auto'] as const)('serves the real client with the token (%s)', async (era) => {
    const c = await connectClient(srv.url, era, TOKEN);
    const { tools } = await c.client.listTools();
    expect(tools.length).toBeGreaterThan(0);
    await c.client.close();
  });

  it('scopes sessions to the principal (sha256 prefix of the token), never the token itself', async () => {
    const c = await connectClient(srv.url, 'auto', TOKEN);
    await c.client.listTools();
    await c.client.close();
    const modern = srv.sessions.at(-1)!;
    expect(modern).toMatchObject({ transport: 'http', principal: expect.stringMatching(/^[0-9a-f]{16}$/) });
    expect(modern.id).toBe(`http-${modern.principal}`);
    expect(JSON.stringify(srv.sessions)).not.toContain(TOKEN);
  });

  it('keeps /healthz open without a token', async () => {
    const res = await rawRequest(`${srv.origin}/healthz`);
    expect(res.status).toBe(200);
    expect(JSON.parse(res.body)).toMatchObject({ status: 'ok' });
  });
});

describe('DNS rebinding guard', () => {
  let srv: StartedHttp;
  beforeAll(async () => (srv = await startHttp({ allowedHosts: ['mcp.example.test'] })));
  afterAll(async () => srv?.stop());

  it('answers 403 to a foreign Host header', async () => {
    const res = await rawRequest(srv.url, {
      method: 'POST',
      headers: { ...MCP_HEADERS, host: 'evil.example.com' },
      body: INITIALIZE,
    });
    expect(res.status).toBe(403);
  });

  it('answers 403 to a foreign Origin header', async () => {
    const res = await rawRequest(srv.url, {
      method: 'POST',
      headers: { ...MCP_HEADERS, origin: 'http://evil.example.com' },
      body: INITIALIZE,
    });
    expect(res.status).toBe(403);
  });

  it('serves loopback Host and Origin, and hosts from allowed_hosts', async () => {
    const port = new URL(srv.url).port;
    for (const host of [`127.0.0.1:${port}`, `localhost:${port}`, 'mcp.example.test']) {
      const res = await rawRequest(srv.url, {
        method: 'POST',
        headers: { ...MCP_HEADERS, host, origin: `http://localhost:${port}` },
        body: INITIALIZE,
      });
      expect(res.status).toBe(200);
    }
  });
});

describe('binding', () => {
  it('refuses to serve a non-loopback address without a token', async () => {
    const err = await serveOverHttp({
      server: { build: () => expect.unreachable(), onChanged: () => () => undefined },
      log: silentLogger(),
      host: '0.0.0.0',
      port: 0,
    }).catch((e: unknown) => e);
    expect(isSkillsError(err) && err.code).toBe('CONFIG_INVALID');
  });
});
