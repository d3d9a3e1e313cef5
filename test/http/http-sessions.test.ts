import { request, type IncomingMessage } from 'node:http';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { connectClient } from './helpers/connect-client.js';
import { MCP_HEADERS, openRawSession, rawRequest } from './helpers/raw-request.js';
import { startHttp, type StartedHttp } from './helpers/start-http.js';

const LIST_TOOLS = JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list', params: {} });
/** Waiting for a condition (not a timing assertion): generous for a loaded CI machine. */
const WAIT = { timeout: 10_000, interval: 50 };

/** Opens a session's GET stream; resolves with the response once its head arrived, and the request to cut it. */
const openStream = (url: string, id: string) =>
  new Promise<{ res: IncomingMessage; cut: () => void }>((resolve, reject) => {
    const req = request(url, {
      method: 'GET',
      headers: { ...legacyHeaders(id), accept: 'text/event-stream' },
    });
    req.on('response', (res) => resolve({ res, cut: () => req.destroy() }));
    req.on('error', reject);
    req.end();
  });

const legacyHeaders = (id: string) => ({
  ...MCP_HEADERS,
  'mcp-session-id': id,
  'mcp-protocol-version': '2025-11-25',
});

describe('legacy sessions', () => {
  let srv: StartedHttp | undefined;
  afterEach(async () => {
    await srv?.stop();
    srv = undefined;
  });

  it('answers 400 to a legacy request without Mcp-Session-Id', async () => {
    srv = await startHttp();
    const res = await rawRequest(srv.url, { method: 'POST', headers: MCP_HEADERS, body: LIST_TOOLS });
    expect(res.status).toBe(400);
  });

  it('answers 405 to a GET without Mcp-Session-Id in either era (no stream to offer), and opens one with it', async () => {
    srv = await startHttp();
    const sse = { accept: 'text/event-stream' };
    for (const version of [
      {},
      { 'mcp-protocol-version': '2025-11-25' },
      { 'mcp-protocol-version': '2026-07-28' },
    ]) {
      const early = await rawRequest(srv.url, { method: 'GET', headers: { ...sse, ...version } });
      expect(early.status).toBe(405);
      expect(early.headers.allow).toBe('POST');
      expect(JSON.parse(early.body)).toMatchObject({
        error: { message: expect.stringContaining('Mcp-Session-Id') },
      });
    }
    expect((await rawRequest(srv.url, { method: 'DELETE', headers: MCP_HEADERS })).status).toBe(400);
    const stream = await openStream(srv.url, await openRawSession(srv.url));
    stream.cut();
    expect(stream.res.statusCode).toBe(200);
  });

  it('answers 404 to an unknown Mcp-Session-Id', async () => {
    srv = await startHttp();
    const res = await rawRequest(srv.url, {
      method: 'POST',
      headers: legacyHeaders('00000000-0000-4000-8000-000000000000'),
      body: LIST_TOOLS,
    });
    expect(res.status).toBe(404);
  });

  it('serves a session by its id, and DELETE ends it', async () => {
    srv = await startHttp();
    const id = await openRawSession(srv.url);
    expect(srv.http.stats().sessions).toBe(1);
    const listed = await rawRequest(srv.url, {
      method: 'POST',
      headers: legacyHeaders(id),
      body: LIST_TOOLS,
    });
    expect(listed.status).toBe(200);
    expect(listed.body).toContain('read_skill_file');
    const deleted = await rawRequest(srv.url, { method: 'DELETE', headers: legacyHeaders(id) });
    expect(deleted.status).toBe(200);
    expect(srv.http.stats().sessions).toBe(0);
    const after = await rawRequest(srv.url, { method: 'POST', headers: legacyHeaders(id), body: LIST_TOOLS });
    expect(after.status).toBe(404);
    expect(srv.ended).toEqual([{ id, reason: 'client_closed' }]);
  });

  it("sends a GET stream's head at once, and frees the session's stream when its client goes away", async () => {
    srv = await startHttp();
    const id = await openRawSession(srv.url);
    const first = await openStream(srv.url, id);
    expect(first.res.statusCode).toBe(200);
    expect(first.res.headers['content-type']).toContain('text/event-stream');
    // One GET stream per session: a second is refused while the first is open.
    const busy = await openStream(srv.url, id);
    expect(busy.res.statusCode).toBe(409);
    busy.cut();
    first.cut();
    // Once the server sees the client gone, the session takes a new stream (no event needed to notice).
    await vi.waitFor(async () => {
      const again = await openStream(srv!.url, id);
      again.cut();
      expect(again.res.statusCode).toBe(200);
    }, WAIT);
  });

  it('expires sessions idle past the limit, even one holding an idle GET stream, and keeps an active one', async () => {
    let now = 1_000_000;
    srv = await startHttp({ now: () => now, limits: { sessionIdleMs: 60_000 } });
    const idle = await openRawSession(srv.url);
    const streaming = await connectClient(srv.url, 'legacy'); // holds its GET stream open, then does nothing
    const active = await connectClient(srv.url, 'legacy');
    now += 60_001;
    await active.client.listTools();
    expect(await srv.http.expireIdleSessions()).toBe(2);
    const res = await rawRequest(srv.url, { method: 'POST', headers: legacyHeaders(idle), body: LIST_TOOLS });
    expect(res.status).toBe(404);
    expect(srv.ended).toEqual(
      expect.arrayContaining([
        { id: idle, reason: 'client_closed' },
        { id: streaming.transport.sessionId, reason: 'client_closed' },
      ]),
    );
    expect((await active.client.listTools()).tools.length).toBeGreaterThan(0);
    await streaming.client.close().catch(() => undefined);
    await active.client.close();
  });

  it('does not let one client hold every session: its own least recently used idle one makes room', async () => {
    srv = await startHttp({ limits: { maxSessions: 5, maxSessionsPerClient: 3 } });
    // The attack: far more bare initializes than the server has sessions.
    const opened: string[] = [];
    for (let i = 0; i < 10; i++) opened.push(await openRawSession(srv.url));
    expect(srv.http.stats().sessions).toBe(3);
    const first = await rawRequest(srv.url, {
      method: 'POST',
      headers: legacyHeaders(opened[0]!),
      body: LIST_TOOLS,
    });
    expect(first.status).toBe(404);
    const c = await connectClient(srv.url, 'legacy');
    expect((await c.client.listTools()).tools.length).toBeGreaterThan(0);
    await c.client.close();
  });

  it('does not let another client on the same peer close a session whose client is connected', async () => {
    srv = await startHttp({ limits: { maxSessions: 10, maxSessionsPerClient: 3 } });
    // The victim: a real client holding its listen stream, idle between calls.
    const victim = await connectClient(srv.url, 'legacy');
    expect((await victim.client.listTools()).tools.length).toBeGreaterThan(0);
    await vi.waitFor(() => expect(srv!.http.stats().sessions).toBe(1));
    // The attack: another local process (same loopback peer, no token) floods bare initializes.
    for (let i = 0; i < 6; i++) await openRawSession(srv.url).catch(() => undefined);
    expect((await victim.client.listTools()).tools.length).toBeGreaterThan(0);
    expect(srv.ended.map((e) => e.id)).not.toContain(victim.transport.sessionId);
    await victim.client.close();
  });

  it('gives each legacy client its own session, named by its Mcp-Session-Id', async () => {
    srv = await startHttp();
    const a = await connectClient(srv.url, 'legacy');
    const b = await connectClient(srv.url, 'legacy');
    const ids = [a.transport.sessionId, b.transport.sessionId];
    expect(new Set(ids).size).toBe(2);
    expect(srv.sessions.map((s) => s.id)).toEqual(ids);
    expect(srv.sessions.every((s) => s.transport === 'http' && s.principal === undefined)).toBe(true);
    await a.client.close();
    await b.client.close();
  });

  it('serves modern requests without a token as the http-anonymous session', async () => {
    srv = await startHttp();
    const c = await connectClient(srv.url, 'auto');
    await c.client.callTool({ name: 'commit-message', arguments: {} });
    expect(srv.sessions.length).toBeGreaterThan(0);
    expect(srv.sessions.every((s) => s.id === 'http-anonymous' && s.principal === undefined)).toBe(true);
    expect(srv.http.stats().sessions).toBe(0);
    await c.client.close();
  });

  it('ends every session on shutdown (legacy ones and the modern principal) with the given reason', async () => {
    srv = await startHttp();
    const legacy = await connectClient(srv.url, 'legacy');
    const modern = await connectClient(srv.url, 'auto');
    await modern.client.listTools();
    await srv.http.close({ reason: 'signal' });
    expect(srv.ended).toEqual(
      expect.arrayContaining([
        { id: legacy.transport.sessionId, reason: 'signal' },
        { id: 'http-anonymous', reason: 'signal' },
      ]),
    );
    expect(srv.ended).toHaveLength(2);
    await legacy.client.close();
    await modern.client.close();
  });
});
