import { afterEach, describe, expect, it, vi } from 'vitest';
import { connectClient } from './helpers/connect-client.js';
import { holdRequest, INITIALIZE, MCP_HEADERS, openRawSession, rawRequest } from './helpers/raw-request.js';
import { startHttp, type StartedHttp } from './helpers/start-http.js';

/** Waiting for a condition (not a timing assertion): generous for a loaded CI machine. */
const WAIT = { timeout: 10_000, interval: 20 };

describe('limits and health', () => {
  let srv: StartedHttp | undefined;
  afterEach(async () => {
    await srv?.stop();
    srv = undefined;
  });

  it('answers 413 to an oversized body, with or without Content-Length, and keeps serving', async () => {
    srv = await startHttp({ limits: { maxBodyBytes: 64 * 1024 } });
    const big = JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/list',
      params: { pad: 'x'.repeat(100_000) },
    });
    const declared = await rawRequest(srv.url, { method: 'POST', headers: MCP_HEADERS, body: big });
    expect(declared.status).toBe(413);
    const chunked = await rawRequest(srv.url, {
      method: 'POST',
      headers: { ...MCP_HEADERS, 'transfer-encoding': 'chunked' },
      body: big,
    });
    expect(chunked.status).toBe(413);
    const c = await connectClient(srv.url, 'legacy');
    expect((await c.client.listTools()).tools.length).toBeGreaterThan(0);
    await c.client.close();
  });

  it('answers 431 to oversized headers', async () => {
    srv = await startHttp({ limits: { maxHeaderBytes: 8 * 1024 } });
    const res = await rawRequest(srv.url, {
      method: 'POST',
      headers: { ...MCP_HEADERS, 'x-pad': 'y'.repeat(10_000) },
      body: INITIALIZE,
    });
    expect(res.status).toBe(431);
    expect((await rawRequest(`${srv.origin}/healthz`)).status).toBe(200);
  });

  it('answers 429 past the per-client concurrency limit, and serves again once requests finish', async () => {
    srv = await startHttp({ limits: { maxInFlightPerClient: 2 }, hold: true });
    const c = await connectClient(srv.url, 'auto');
    const held = [c.client.callTool({ name: 'hold' }), c.client.callTool({ name: 'hold' })];
    await vi.waitFor(() => expect(srv!.http.stats().inFlight).toBe(2), WAIT);
    const refused = await rawRequest(srv.url, { method: 'POST', headers: MCP_HEADERS, body: INITIALIZE });
    expect(refused.status).toBe(429);
    expect(refused.headers['retry-after']).toBeDefined();
    srv.release();
    expect((await Promise.all(held)).map((r) => r.isError)).toEqual([undefined, undefined]);
    await vi.waitFor(() => expect(srv!.http.stats().inFlight).toBe(0), WAIT);
    const again = await rawRequest(srv.url, { method: 'POST', headers: MCP_HEADERS, body: INITIALIZE });
    expect(again.status).toBe(200);
    await c.client.close();
  });

  it('does not let slow request bodies hold the per-client slots', async () => {
    srv = await startHttp({ limits: { maxInFlightPerClient: 4 } });
    // The attack: more requests than the limit, each sending its headers and one byte of a large body.
    const slow = Array.from({ length: 6 }, () =>
      holdRequest(srv!.url, MCP_HEADERS, `{${' '.repeat(99_999)}`, 1),
    );
    await vi.waitFor(() => expect(srv!.http.stats().connections).toBeGreaterThanOrEqual(6), WAIT);
    const c = await connectClient(srv.url, 'legacy');
    expect((await c.client.listTools()).tools.length).toBeGreaterThan(0);
    await c.client.close();
    for (const h of slow) void h.finish('').catch(() => undefined);
  });

  it('serves /healthz without skill data, and 404 off the MCP path', async () => {
    srv = await startHttp();
    const health = await rawRequest(`${srv.origin}/healthz`);
    expect(health.status).toBe(200);
    expect(JSON.parse(health.body)).toEqual({ status: 'ok' });
    expect((await rawRequest(`${srv.origin}/healthz`, { method: 'POST' })).status).toBe(405);
    expect((await rawRequest(`${srv.origin}/other`)).status).toBe(404);
    expect((await rawRequest(srv.url, { method: 'PUT', headers: MCP_HEADERS })).status).toBe(405);
  });
});

describe('graceful shutdown', () => {
  it('refuses new work with 503 while a running request finishes, then stops listening', async () => {
    const srv = await startHttp({ hold: true });
    const c = await connectClient(srv.url, 'auto');
    const held = c.client.callTool({ name: 'hold' });
    await vi.waitFor(() => expect(srv.http.stats().inFlight).toBe(1), WAIT);
    const closing = srv.http.close();
    const health = await rawRequest(`${srv.origin}/healthz`);
    expect([health.status, JSON.parse(health.body)]).toEqual([503, { status: 'stopping' }]);
    const refused = await rawRequest(srv.url, { method: 'POST', headers: MCP_HEADERS, body: INITIALIZE });
    expect(refused.status).toBe(503);
    srv.release();
    expect((await held).content).toEqual([{ type: 'text', text: 'released' }]);
    await closing;
    await expect(rawRequest(`${srv.origin}/healthz`)).rejects.toThrow(/ECONNREFUSED/);
    await srv.stop();
  });

  it('still takes answers and notifications from a live legacy session while stopping', async () => {
    const srv = await startHttp({ limits: { shutdownGraceMs: 60_000 }, hold: true });
    const id = await openRawSession(srv.url);
    const headers = { ...MCP_HEADERS, 'mcp-session-id': id, 'mcp-protocol-version': '2025-11-25' };
    const c = await connectClient(srv.url, 'auto');
    const held = c.client.callTool({ name: 'hold' });
    await vi.waitFor(() => expect(srv.http.stats().inFlight).toBe(1), WAIT);
    const closing = srv.http.close();
    const notification = JSON.stringify({
      jsonrpc: '2.0',
      method: 'notifications/cancelled',
      params: { requestId: 99 },
    });
    expect((await rawRequest(srv.url, { method: 'POST', headers, body: notification })).status).toBe(202);
    const newWork = JSON.stringify({ jsonrpc: '2.0', id: 5, method: 'tools/list' });
    expect((await rawRequest(srv.url, { method: 'POST', headers, body: newWork })).status).toBe(503);
    srv.release();
    await held;
    await closing;
    await srv.stop();
  });

  it('interrupts a running request when forced', async () => {
    const srv = await startHttp({ hold: true });
    const c = await connectClient(srv.url, 'auto');
    const held = c.client.callTool({ name: 'hold' });
    await vi.waitFor(() => expect(srv.http.stats().inFlight).toBe(1), WAIT);
    await srv.http.close({ force: true });
    await expect(held).rejects.toThrow();
    await srv.stop();
  });
});
