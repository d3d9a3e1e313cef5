import { connect, type Socket } from 'node:net';
import { rmSync } from 'node:fs';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { connectClient } from './helpers/connect-client.js';
import { MCP_HEADERS, rawRequest } from './helpers/raw-request.js';
import { servedUrl, spawnCli, type SpawnedServer } from './helpers/spawn-server.js';
import { copySkills, startHttp, type StartedHttp } from './helpers/start-http.js';
import { waitFor } from '../helpers/wait-for.js';

const TOKEN = 'hostile-load-token-0123456789abcdef';
const WAIT = { timeout: 20_000, interval: 50 };

/** `count` connections that each send part of a request head and then nothing. */
function partialHeaderFlood(port: number, count: number) {
  const sockets: Socket[] = [];
  let settled = 0;
  for (let i = 0; i < count; i++) {
    const s = connect(port, '127.0.0.1');
    sockets.push(s);
    // A socket settles once: connected (and then perhaps reset by the server) or refused.
    let done = false;
    const settle = () => {
      if (!done) settled++;
      done = true;
    };
    s.once('connect', () => {
      settle();
      s.write('GET /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ');
    });
    s.once('error', settle);
  }
  return {
    settled: () => settled,
    stop: () => sockets.forEach((s) => s.destroy()),
  };
}

describe('hostile load on the built binary', () => {
  let dir: string;
  let server: SpawnedServer | undefined;
  beforeAll(() => void (dir = copySkills()));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  afterEach(async () => {
    server?.proc.kill('SIGTERM');
    await server?.exited;
    server = undefined;
  });

  it('survives more connections than it has file descriptors, and serves a client with the token meanwhile', async () => {
    // 256 open files for the whole server (SQLite, pipes and listeners included); the flood is 600 sockets, as many
    // as the server has descriptors and more, each holding a half-sent request head.
    server = spawnCli(
      ['--http', '--port', '0', '--skills', dir, '--no-watch', '--log-level', 'debug'],
      { SKILLS_MCP_TOKEN: TOKEN },
      ['prlimit', '--nofile=256:256'],
    );
    const url = await servedUrl(server);
    const flood = partialHeaderFlood(Number(new URL(url).port), 600);
    try {
      await vi.waitFor(() => expect(flood.settled()).toBe(600), WAIT);
      for (const era of ['legacy', 'auto'] as const) {
        const c = await connectClient(url, era, TOKEN);
        expect((await c.client.listTools()).tools.length).toBeGreaterThan(0);
        const read = await c.client.callTool({
          name: 'read_skill_file',
          arguments: { skill: 'markdown-toc', path: 'SKILL.md' },
        });
        expect(read.isError).toBeFalsy();
        await c.client.close();
      }
      // The idle-time memory reclaimer runs 10 s after the last request: it must not die for want of a descriptor.
      // (Its debug line says it ran; the server logs at debug level for this.)
      await waitFor(
        () => server!.stderr().includes('reclaimed memory after a busy spell'),
        30_000,
        'the reclaimer',
      );
      expect(server.proc.exitCode).toBeNull();
      const health = await rawRequest(url.replace(/\/mcp$/, '/healthz'), {
        headers: { authorization: `Bearer ${TOKEN}` },
      });
      expect(health.status).toBe(200);
    } finally {
      flood.stop();
    }
    expect(server.stderr()).not.toContain('EMFILE');
    expect(server.stderr()).toContain('connection limit reached');
  }, 60_000);

  it('answers 400 to a malformed Host header without logging a stack trace', async () => {
    server = spawnCli(['--http', '--port', '0', '--skills', dir, '--no-watch']);
    const url = await servedUrl(server);
    for (const path of ['/mcp', '/healthz']) {
      const r = await rawRequest(url.replace(/\/mcp$/, path), {
        method: path === '/mcp' ? 'POST' : 'GET',
        headers: { ...MCP_HEADERS, host: 'evil.com@127.0.0.1' },
        body: path === '/mcp' ? '{}' : undefined,
      } as Parameters<typeof rawRequest>[1]);
      expect(r.status).toBe(400);
    }
    expect(server.stderr()).not.toMatch(/"stack"|at .*\.js:\d+/);
  });
});

describe('/healthz', () => {
  let srv: StartedHttp | undefined;
  afterEach(async () => {
    await srv?.stop();
    srv = undefined;
  });

  it('applies the Host check, and shows counts only to a caller with the token', async () => {
    srv = await startHttp({ token: TOKEN });
    const health = `${srv.origin}/healthz`;
    expect((await rawRequest(health, { headers: { host: 'evil.example' } })).status).toBe(403);
    expect(JSON.parse((await rawRequest(health)).body)).toEqual({ status: 'ok' });
    expect(
      JSON.parse((await rawRequest(health, { headers: { authorization: `Bearer ${TOKEN}` } })).body),
    ).toEqual({ status: 'ok', sessions: 0, inFlight: 0 });
  });

  it('shows counts without a token configured only when asked to', async () => {
    srv = await startHttp({ limits: { healthDetails: true } });
    expect(JSON.parse((await rawRequest(`${srv.origin}/healthz`)).body)).toEqual({
      status: 'ok',
      sessions: 0,
      inFlight: 0,
    });
  });
});
