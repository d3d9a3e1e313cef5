import { connect, type Socket } from 'node:net';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { MCP_HEADERS, rawRequest } from './helpers/raw-request.js';
import { startHttp, type StartedHttp } from './helpers/start-http.js';

const LISTEN = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'subscriptions/listen',
  params: {
    notifications: { toolsListChanged: true },
    _meta: {
      'io.modelcontextprotocol/protocolVersion': '2026-07-28',
      'io.modelcontextprotocol/clientInfo': { name: 'listener', version: '1' },
      'io.modelcontextprotocol/clientCapabilities': {},
    },
  },
});

const TOOLS_LIST = JSON.stringify({
  jsonrpc: '2.0',
  id: 2,
  method: 'tools/list',
  params: {
    _meta: {
      'io.modelcontextprotocol/protocolVersion': '2026-07-28',
      'io.modelcontextprotocol/clientInfo': { name: 'other', version: '1' },
      'io.modelcontextprotocol/clientCapabilities': {},
    },
  },
});

const modern = (method: string) => ({
  ...MCP_HEADERS,
  'mcp-method': method,
  'mcp-protocol-version': '2026-07-28',
});

interface Stream {
  socket: Socket;
  /** The response's status code, once its head arrives (0 if the connection ends first). */
  status: Promise<number>;
}

/** A `subscriptions/listen` POST on a socket of its own, from `from` (a loopback address), held open. */
function openListen(url: string, from = '127.0.0.1', token?: string): Stream {
  const { hostname, port } = new URL(url);
  const socket = connect({ host: hostname, port: Number(port), localAddress: from });
  const status = new Promise<number>((resolve) => {
    let head = '';
    socket.on('data', (d: Buffer) => {
      head += d.toString('latin1');
      const m = /^HTTP\/1\.1 (\d{3})/.exec(head);
      if (m !== null) resolve(Number(m[1]));
    });
    socket.once('close', () => resolve(0));
    socket.on('error', () => undefined);
  });
  const headers = {
    host: `${hostname}:${port}`,
    ...modern('subscriptions/listen'),
    ...(token === undefined ? {} : { authorization: `Bearer ${token}` }),
    'content-length': String(Buffer.byteLength(LISTEN)),
  };
  socket.write(
    `POST /mcp HTTP/1.1\r\n${Object.entries(headers)
      .map(([k, v]) => `${k}: ${v}`)
      .join('\r\n')}\r\n\r\n${LISTEN}`,
  );
  return { socket, status };
}

describe('clients that hold long-lived streams', () => {
  let s: StartedHttp | undefined;
  const streams: Stream[] = [];
  afterEach(async () => {
    for (const st of streams.splice(0)) st.socket.destroy();
    await s?.stop();
    s = undefined;
  });

  it("refuses a client's listen stream past its cap with 429, serves its other requests, and takes one again once a stream closes", async () => {
    const TOKEN = 'stream-hog-token-0123456789abcdef';
    s = await startHttp({ token: TOKEN, limits: { maxListenStreamsPerClient: 3 } });
    const url = s.url;
    for (let i = 0; i < 3; i++) streams.push(openListen(url, '127.0.0.1', TOKEN));
    expect(await Promise.all(streams.map((st) => st.status))).toEqual([200, 200, 200]);

    const fourth = openListen(url, '127.0.0.1', TOKEN);
    streams.push(fourth);
    expect(await fourth.status).toBe(429);

    const list = await rawRequest(url, {
      method: 'POST',
      headers: { ...modern('tools/list'), authorization: `Bearer ${TOKEN}` },
      body: TOOLS_LIST,
    });
    expect(list.status).toBe(200);
    expect(list.body).toContain('markdown-toc');

    streams[0]!.socket.destroy();
    // Kept: the server frees the stream's slot when it sees the close, which it reports nowhere a test can watch.
    await new Promise((r) => setTimeout(r, 200));
    const again = openListen(url, '127.0.0.1', TOKEN);
    streams.push(again);
    expect(await again.status).toBe(200);
  });

  it('keeps serving another client, and /healthz, while one client holds every connection with listen streams', async () => {
    // No token: each peer address is a client. The hog connects from 127.0.0.2, everyone else from 127.0.0.1.
    s = await startHttp({ limits: { maxConnections: 12, maxListenStreamsPerClient: 100 } });
    const url = s.url;
    for (let i = 0; i < 12; i++) streams.push(openListen(url, '127.0.0.2'));
    expect(new Set(await Promise.all(streams.map((st) => st.status)))).toEqual(new Set([200]));
    // One client holds at most 9 of the 12 connections: each stream past that closed the hog's oldest.
    await vi.waitFor(() => expect(streams.slice(0, 3).every((st) => st.socket.destroyed)).toBe(true), {
      timeout: 5000,
      interval: 50,
    });
    expect(streams.slice(3).filter((st) => st.socket.destroyed)).toHaveLength(0);
    expect(s.http.stats().connections).toBe(9);

    // The rest of the connections are left for everyone else.
    for (let i = 0; i < 3; i++) {
      const list = await rawRequest(url, { method: 'POST', headers: modern('tools/list'), body: TOOLS_LIST });
      expect(list.status).toBe(200);
      expect(list.body).toContain('markdown-toc');
      const health = await rawRequest(url.replace(/\/mcp$/, '/healthz'));
      expect(health.status).toBe(200);
    }
    expect(streams.slice(3).filter((st) => st.socket.destroyed)).toHaveLength(0);
  });
  it('keeps serving a newcomer when several peers together hold every connection', async () => {
    // No token: four local "clients" (source addresses 127.0.0.10–13), each within its own limits, fill the cap.
    s = await startHttp({ limits: { maxConnections: 12, maxListenStreamsPerClient: 3 } });
    const url = s.url;
    for (const from of ['127.0.0.10', '127.0.0.11', '127.0.0.12', '127.0.0.13'])
      for (let i = 0; i < 3; i++) streams.push(openListen(url, from));
    expect(new Set(await Promise.all(streams.map((st) => st.status)))).toEqual(new Set([200]));
    expect(s.http.stats().connections).toBe(12);

    // At the cap the newcomer closes the oldest stream of the client holding the most, and is served.
    const list = await rawRequest(url, { method: 'POST', headers: modern('tools/list'), body: TOOLS_LIST });
    expect(list.status).toBe(200);
    expect(list.body).toContain('markdown-toc');
    expect((await rawRequest(url.replace(/\/mcp$/, '/healthz'))).status).toBe(200);
    await vi.waitFor(() => expect(streams.filter((st) => st.socket.destroyed).length).toBeGreaterThan(0), {
      timeout: 5000,
      interval: 50,
    });
  });
});
