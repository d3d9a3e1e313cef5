import { chmodSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer as createHttpServer } from 'node:http';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/run-cli.js';
import { repoRoot, tempDir } from '../helpers/temp-dir.js';
import { servedUrl, spawnCli, type SpawnedServer } from '../http/helpers/spawn-server.js';

const closedPort = () =>
  new Promise<number>((resolve) => {
    const s = createServer();
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });

describe('OAuth configuration', () => {
  const cleanups: (() => void)[] = [];
  let server: SpawnedServer | undefined;
  afterEach(async () => {
    server?.proc.kill('SIGTERM');
    await server?.exited;
    server = undefined;
    for (const c of cleanups.splice(0)) c();
  });
  const dir = () => {
    const t = tempDir();
    cleanups.push(t.cleanup);
    return t.dir;
  };
  /** The built server signing in with `issuer`'s tokens; resolves with its MCP endpoint URL. */
  const serveSignedInBy = async (issuer: string) => {
    server = spawnCli(
      ['--http', '--port', '0', '--skills', dir(), '--no-watch'].concat([
        '--oauth-issuer',
        issuer,
        '--oauth-resource',
        'http://127.0.0.1:1/mcp',
      ]),
    );
    return servedUrl(server);
  };
  const serve = (args: string[], env: Record<string, string> = {}) =>
    runCli(['serve', '--http', '--port', '0', '--skills', dir(), '--audit', join(dir(), 'a.db'), ...args], {
      env,
    });

  it.each<[string, string[], string]>([
    [
      'an issuer without a resource',
      ['--oauth-issuer', 'https://idp.example'],
      'http.oauth.resource: Invalid input: expected string, received undefined',
    ],
    [
      'a plain-http issuer off loopback',
      ['--oauth-issuer', 'http://idp.example', '--oauth-resource', 'https://skills.example/mcp'],
      'http.oauth.issuer: issuer must be an https:// URL (http:// only on localhost), without a fragment',
    ],
  ])('exits 2 with path: message for %s', (_what, args, line) => {
    const r = serve(args);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(line);
  });

  it('exits 2 when a bearer token is configured too (file or SKILLS_MCP_TOKEN)', () => {
    const oauth = ['--oauth-issuer', 'https://idp.example', '--oauth-resource', 'https://skills.example/mcp'];
    const file = join(dir(), 'token');
    writeFileSync(file, 'a-token-of-enough-length-0123456789\n');
    chmodSync(file, 0o600);
    const withFile = serve([...oauth, '--token-file', file]);
    expect(withFile.code).toBe(2);
    expect(withFile.stderr).toContain(
      'http.oauth: use either a bearer token (token_file) or oauth, not both',
    );
    const withEnv = serve(oauth, { SKILLS_MCP_TOKEN: 'a-token-of-enough-length-0123456789' });
    expect(withEnv.code).toBe(2);
    expect(withEnv.stderr).toContain('http.oauth: use either a bearer token or oauth, not both');
  });

  it('accepts the sign-in configuration of docs/http.md as written', () => {
    const readme = readFileSync(join(repoRoot, 'docs', 'http.md'), 'utf8');
    const block = /```yaml\n(# skills-mcp\.yaml\nhttp:\n {2}oauth:\n[\s\S]*?)```/.exec(readme)?.[1];
    expect(block).toContain('caller: { groups: [ops] }');
    const config = join(dir(), 'skills-mcp.yaml');
    writeFileSync(config, block!);
    const r = runCli(['list', '--skills', dir(), '--config', config]);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
  });

  it('exits 2 when the read and run scopes are the same (a reader could run scripts)', () => {
    const config = join(dir(), 'skills-mcp.yaml');
    writeFileSync(
      config,
      'http:\n  oauth:\n    issuer: https://idp.example\n    resource: https://skills.example/mcp\n' +
        '    scopes: { read: skills, run: skills }\n',
    );
    const r = serve(['--config', config]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('http.oauth.scopes.run: read and run must be different scopes');
  });

  it('exits 2 when the key set may be refetched less often than it expires', () => {
    const config = join(dir(), 'skills-mcp.yaml');
    writeFileSync(
      config,
      'http:\n  oauth:\n    issuer: https://idp.example\n    resource: https://skills.example/mcp\n' +
        '    jwks_max_age_seconds: 10\n    jwks_min_refetch_seconds: 30\n',
    );
    const r = serve(['--config', config]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(
      'http.oauth.jwks_min_refetch_seconds: jwks_min_refetch_seconds must not exceed jwks_max_age_seconds',
    );
  });

  it('exits 2 when no token type is accepted', () => {
    const config = join(dir(), 'skills-mcp.yaml');
    writeFileSync(
      config,
      'http:\n  oauth:\n    issuer: https://idp.example\n    resource: https://skills.example/mcp\n' +
        '    accepted_token_types: []\n',
    );
    const r = serve(['--config', config]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(
      'http.oauth.accepted_token_types: Too small: expected array to have >=1 items',
    );
  });

  it('exits 2 for a policy rule whose caller lists nobody', () => {
    const config = join(dir(), 'skills-mcp.yaml');
    writeFileSync(config, 'approval:\n  rules:\n    - { skill: pdf, caller: {}, action: allow }\n');
    const r = serve(['--config', config]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('approval.rules.0.caller: list at least one subject or group');
  });

  it('fails closed with 503 while the issuer cannot be reached, and keeps serving', async () => {
    const issuer = `http://127.0.0.1:${await closedPort()}`;
    const url = await serveSignedInBy(issuer);
    const post = (authorization?: string) =>
      fetch(url, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          ...(authorization === undefined ? {} : { authorization }),
        },
        body: '{"jsonrpc":"2.0","id":1,"method":"ping"}',
      });
    const jwtShaped = 'eyJhbGciOiJFUzI1NiIsInR5cCI6ImF0K2p3dCJ9.eyJzdWIiOiJhbGljZSJ9.c2lnbmF0dXJl'; // typ at+jwt: the keys are needed
    for (let i = 0; i < 2; i++) {
      const res = await post(`Bearer ${jwtShaped}`);
      expect(res.status).toBe(503);
      expect(res.headers.get('retry-after')).toBe('5');
    }
    expect((await post()).status).toBe(401);
    expect(server!.stderr()).toContain('cannot verify access tokens now');
    expect(server!.stderr()).not.toContain(jwtShaped);
  });

  it('reads at most 1 MiB of an issuer key set and does not fetch again at once after a failure', async () => {
    // An issuer whose key set never ends: the server must abandon it, not hold it.
    let jwksHits = 0;
    let jwksBytesSent = 0;
    const issuerServer = createHttpServer((req, res) => {
      const origin = `http://127.0.0.1:${(issuerServer.address() as { port: number }).port}`;
      if (req.url === '/.well-known/openid-configuration') {
        res.setHeader('content-type', 'application/json');
        res.end(JSON.stringify({ issuer: origin, jwks_uri: `${origin}/jwks` }));
        return;
      }
      jwksHits++;
      res.setHeader('content-type', 'application/json');
      const chunk = Buffer.alloc(64 * 1024, 0x20);
      res.write('{"keys":[');
      const pump = () => {
        while (!res.destroyed && jwksBytesSent < 256 * 1024 * 1024) {
          jwksBytesSent += chunk.length;
          if (!res.write(chunk)) return void res.once('drain', pump);
        }
        res.end(']}');
      };
      pump();
    });
    await new Promise<void>((r) => issuerServer.listen(0, '127.0.0.1', r));
    cleanups.push(() => void issuerServer.close());
    const issuer = `http://127.0.0.1:${(issuerServer.address() as { port: number }).port}`;
    const url = await serveSignedInBy(issuer);
    const jwtShaped = 'eyJhbGciOiJFUzI1NiIsInR5cCI6ImF0K2p3dCJ9.eyJzdWIiOiJhbGljZSJ9.c2lnbmF0dXJl'; // typ at+jwt: the keys are needed
    const statuses: number[] = [];
    for (let i = 0; i < 3; i++) {
      const res = await fetch(url, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          authorization: `Bearer ${jwtShaped}`,
        },
        body: '{"jsonrpc":"2.0","id":1,"method":"ping"}',
      });
      statuses.push(res.status);
    }
    expect(statuses).toEqual([503, 503, 503]);
    expect(jwksHits).toBe(1);
    // What the issuer got written before the server hung up: the 1 MiB cap plus what socket buffers hold.
    expect(jwksBytesSent).toBeLessThan(16 * 1024 * 1024);
    expect(server!.stderr()).toContain('more than 1048576 bytes');
  });
});
