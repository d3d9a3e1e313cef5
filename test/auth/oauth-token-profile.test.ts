import { writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { JWTPayload } from 'jose';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { freePort } from '../helpers/free-port.js';
import { gatedFixture, type GatedFixture } from '../helpers/gated-fixture.js';
import { startOidcIssuer, type OidcIssuer } from '../helpers/oidc-issuer.js';
import { servedUrl, spawnCli, type SpawnedServer } from '../http/helpers/spawn-server.js';

const SCOPES = ['skills:read', 'skills:run'];
const YEAR = 365 * 86400;

const initialize = (token: string) => ({
  method: 'POST',
  headers: {
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
    authorization: `Bearer ${token}`,
  },
  body: JSON.stringify({
    jsonrpc: '2.0',
    id: 1,
    method: 'initialize',
    params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'probe', version: '1' } },
  }),
});

/** Polls `check` until it is true or `ms` have passed; resolves with the time it took, or throws. */
async function within(ms: number, what: string, check: () => Promise<boolean>): Promise<number> {
  const started = performance.now();
  await vi.waitFor(
    async () => {
      if (!(await check())) throw new Error(`${what}: not within ${ms} ms`);
    },
    { timeout: ms, interval: 100 },
  );
  return performance.now() - started;
}

describe('OAuth access tokens held to RFC 9068: type, issue time, lifetime, key rotation (built binary, real issuer)', () => {
  let idp: OidcIssuer;
  let fx: GatedFixture;
  let server: SpawnedServer;
  let url: string;
  let resource: string;
  const tokens: string[] = [];
  const logs: string[] = [];

  const start = async (oauth = '') => {
    const port = await freePort();
    resource = `http://127.0.0.1:${port}/mcp`;
    writeFileSync(
      fx.configFile,
      `http:\n  oauth:\n    issuer: ${idp.issuer}\n    resource: ${resource}\n${oauth}`,
    );
    server = spawnCli(['--http', '--port', String(port), ...fx.args]);
    url = await servedUrl(server);
  };
  const stop = async () => {
    server.proc.kill('SIGTERM');
    await server.exited;
    logs.push(server.stderr());
  };
  const claims = (o: Partial<JWTPayload> = {}): JWTPayload => {
    const now = Math.floor(Date.now() / 1000);
    return {
      iss: idp.issuer,
      aud: resource,
      sub: 'alice',
      scope: 'skills:read',
      iat: now,
      exp: now + 600,
      ...o,
    };
  };
  const sign = async (c: JWTPayload, header?: { typ?: string | null; kid?: string }) => {
    const t = await idp.sign(c, header);
    tokens.push(t);
    return t;
  };
  /** The status and the `error_description` of the challenge, for one request with `token`. */
  const send = async (token: string) => {
    const res = await fetch(url, initialize(token));
    await res.body?.cancel();
    const challenge = res.headers.get('www-authenticate') ?? '';
    if (res.status === 401) expect(challenge).toContain('error="invalid_token"');
    return { status: res.status, why: /error_description="([^"]*)"/.exec(challenge)?.[1] ?? '' };
  };

  beforeAll(async () => {
    idp = await startOidcIssuer([{ id: 'alice', groups: [] }], SCOPES);
    fx = gatedFixture('');
    await start();
  });
  afterAll(async () => {
    await stop().catch(() => undefined);
    await idp.close();
    fx.cleanup();
  });

  it('refuses a token whose typ is not at+jwt (JWT, none, dpop+jwt, logout+jwt) with 401 naming the header', async () => {
    for (const typ of ['JWT', null, 'dpop+jwt', 'logout+jwt', 'application/jwt', 'at+jwt; x', '']) {
      const r = await send(await sign(claims(), { typ }));
      expect(r.status, String(typ)).toBe(401);
      expect(r.why, String(typ)).toMatch(/typ header/);
    }
  });

  it('lets in at+jwt with or without application/, in any case', async () => {
    for (const typ of ['at+jwt', 'application/at+jwt', 'AT+JWT', 'Application/At+Jwt'])
      expect((await send(await sign(claims(), { typ }))).status, typ).toBe(200);
    // The issuer's own tokens (oidc-provider marks them at+jwt).
    const real = await idp.token('alice', 'skills:read', resource);
    tokens.push(real);
    expect((await send(real)).status).toBe(200);
  });

  it('refuses a token issued in the future beyond the clock skew, and one without iat', async () => {
    const now = Math.floor(Date.now() / 1000);
    const future = await send(await sign(claims({ iat: now + YEAR, exp: now + YEAR + 600 })));
    expect(future.status).toBe(401);
    expect(future.why).toContain('iat claim');
    expect((await send(await sign(claims({ iat: now + 120 })))).status).toBe(401);
    const { iat: _iat, ...noIat } = claims();
    const missing = await send(await sign(noIat));
    expect(missing.status).toBe(401);
    expect(missing.why).toContain('iat claim');
    // Within the 30 s of skew: let in.
    expect((await send(await sign(claims({ iat: now + 10 })))).status).toBe(200);
  });

  it('refuses a token that lives longer than the maximum lifetime (24 h by default)', async () => {
    const now = Math.floor(Date.now() / 1000);
    const forever = await send(await sign(claims({ iat: now, exp: now + 1000 * YEAR })));
    expect(forever.status).toBe(401);
    expect(forever.why).toContain('lifetime');
    expect((await send(await sign(claims({ iat: now, exp: now + 86400 + 1 })))).status).toBe(401);
    expect((await send(await sign(claims({ iat: now, exp: now + 86400 })))).status).toBe(200);
  });

  it('accepts a newly published key on its first request, with no blind spot after the last fetch', async () => {
    expect((await send(await sign(claims()))).status).toBe(200); // the key set is fetched now
    await idp.publishKey('rotated-1');
    const started = performance.now();
    expect((await send(await sign(claims(), { kid: 'rotated-1' }))).status).toBe(200);
    // At most the 5 s refetch interval waited out, never jose's 30 s cooldown.
    expect(performance.now() - started).toBeLessThan(15_000);
    await idp.publishKey('rotated-2');
    expect((await send(await sign(claims(), { kid: 'rotated-2' }))).status).toBe(200);
  });

  it('fetches the key set at most about once an interval however many unknown key ids arrive', async () => {
    const ghosts: string[] = [];
    for (let i = 0; i < 20; i++) {
      await idp.publishKey(`ghost-${i}`);
      idp.unpublishKey(`ghost-${i}`);
      ghosts.push(await sign(claims(), { kid: `ghost-${i}` }));
    }
    const before = idp.jwksFetches();
    const results = await Promise.all(ghosts.map(send));
    expect(results.map((r) => r.status)).toEqual(ghosts.map(() => 401));
    expect(results[0]!.why).toContain('does not publish');
    expect(idp.jwksFetches() - before).toBeLessThanOrEqual(2);
  });

  it('does not fetch the key set once a request while the issuer answers it with an error', async () => {
    const absent: string[] = [];
    for (let i = 0; i < 12; i++) {
      await idp.publishKey(`absent-${i}`);
      idp.unpublishKey(`absent-${i}`);
      absent.push(await sign(claims(), { kid: `absent-${i}` }));
    }
    idp.setJwksStatus(503);
    const before = idp.jwksFetches();
    // One after the other: concurrent lookups share a fetch anyway; sequential ones must not each start one.
    for (const token of absent) expect((await send(token)).status).not.toBe(200);
    expect(idp.jwksFetches() - before).toBeLessThanOrEqual(3);
    idp.setJwksStatus(200);
    // Once the issuer answers again, its keys verify again (within the refetch interval).
    await within(
      30_000,
      'the key set fetched again',
      async () => (await send(await sign(claims()))).status === 200,
    );
  });

  it("stops verifying a removed key once the key set's Cache-Control max-age (here 1 s, so 5 s) has passed", async () => {
    idp.setJwksCacheControl('public, max-age=1');
    await idp.publishKey('short-lived');
    const token = await sign(claims(), { kid: 'short-lived' });
    // Let in once fetched (on the first request: see above), with the new Cache-Control.
    await within(40_000, 'the new key let in', async () => (await send(token)).status === 200);
    idp.unpublishKey('short-lived');
    const took = await within(
      20_000,
      'the removed key refused',
      async () => (await send(token)).status === 401,
    );
    expect(took).toBeLessThan(12_000);
    expect((await send(token)).why).toContain('does not publish');
    idp.setJwksCacheControl(undefined);
  });

  it('with the configured bounds: lets JWT-typed tokens in, caps the lifetime, drops a removed key within jwks_max_age_seconds', async () => {
    await stop();
    await start(
      '    accepted_token_types: [at+jwt, JWT]\n    max_token_lifetime_seconds: 3600\n' +
        '    jwks_max_age_seconds: 2\n    jwks_min_refetch_seconds: 1\n',
    );
    const now = Math.floor(Date.now() / 1000);
    expect((await send(await sign(claims(), { typ: 'JWT' }))).status).toBe(200);
    expect((await send(await sign(claims(), { typ: 'jwt' }))).status).toBe(200);
    expect((await send(await sign(claims(), { typ: null }))).status).toBe(401);
    expect((await send(await sign(claims(), { typ: 'logout+jwt' }))).status).toBe(401);
    expect((await send(await sign(claims({ iat: now, exp: now + 3601 })))).status).toBe(401);

    await idp.publishKey('removed');
    const token = await sign(claims(), { kid: 'removed' });
    await within(40_000, 'the new key let in', async () => (await send(token)).status === 200);
    idp.unpublishKey('removed');
    const took = await within(
      15_000,
      'the removed key refused',
      async () => (await send(token)).status === 401,
    );
    expect(took).toBeLessThan(8_000);
  });

  it('keeps every token out of the log', async () => {
    await stop();
    const log = logs.join('\n');
    expect(log).toContain('request refused: token');
    for (const t of tokens) {
      expect(log).not.toContain(t);
      expect(log).not.toContain(t.split('.')[2]!);
    }
  });
});

describe('an issuer whose discovery fails (built binary, a loopback issuer answering 500)', () => {
  it('does not ask the issuer again for each token while its discovery keeps failing', async () => {
    let asked = 0;
    const broken = createServer((_req, res) => {
      asked++;
      res.writeHead(500).end();
    });
    await new Promise<void>((r) => broken.listen(0, '127.0.0.1', r));
    const a = broken.address();
    const issuer = `http://127.0.0.1:${typeof a === 'object' && a !== null ? a.port : 0}`;
    const idp = await startOidcIssuer([{ id: 'alice', groups: [] }], SCOPES);
    const fx = gatedFixture('');
    const port = await freePort();
    const resource = `http://127.0.0.1:${port}/mcp`;
    writeFileSync(fx.configFile, `http:\n  oauth:\n    issuer: ${issuer}\n    resource: ${resource}\n`);
    const server = spawnCli(['--http', '--port', String(port), ...fx.args]);
    try {
      const url = await servedUrl(server);
      const now = Math.floor(Date.now() / 1000);
      const token = await idp.sign({ iss: issuer, aud: resource, sub: 'alice', iat: now, exp: now + 600 });
      const statuses: number[] = [];
      for (let i = 0; i < 10; i++) {
        const res = await fetch(url, initialize(token));
        await res.body?.cancel();
        statuses.push(res.status);
      }
      expect(statuses.every((s) => s === 503)).toBe(true);
      // Two discovery documents tried once, not once per token.
      expect(asked).toBeLessThanOrEqual(4);
    } finally {
      server.proc.kill('SIGTERM');
      await server.exited;
      await idp.close();
      fx.cleanup();
      await new Promise<void>((r) => broken.close(() => r()));
    }
  });
});
