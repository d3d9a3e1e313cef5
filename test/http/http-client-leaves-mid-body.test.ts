import { connect } from 'node:net';
import { describe, expect, it } from 'vitest';
import { MCP_HEADERS, openRawSession, rawRequest } from './helpers/raw-request.js';
import { spawnedHttpServer } from './helpers/start-http.js';

/** Sends a POST whose Content-Length promises 100 bytes more than it sends, then closes the connection. */
function leaveMidBody(url: string): Promise<void> {
  const { hostname, port } = new URL(url);
  const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} });
  return new Promise((resolve) => {
    const s = connect(Number(port), hostname, () => {
      s.write(
        `POST /mcp HTTP/1.1\r\nhost: ${hostname}:${port}\r\ncontent-type: ${MCP_HEADERS['content-type']}\r\n` +
          `accept: ${MCP_HEADERS.accept}\r\ncontent-length: ${Buffer.byteLength(body) + 100}\r\n\r\n${body}`,
        () => setTimeout(() => s.destroy(), 20),
      );
    });
    s.on('error', () => undefined);
    s.once('close', () => resolve());
  });
}

describe('a client that leaves while sending its body', () => {
  const { url, server } = spawnedHttpServer();

  it('is not logged as a server error, and the server goes on serving', async () => {
    await Promise.all(Array.from({ length: 20 }, () => leaveMidBody(url())));
    const session = await openRawSession(url());
    const list = await rawRequest(url(), {
      method: 'POST',
      headers: { ...MCP_HEADERS, 'mcp-session-id': session, 'mcp-protocol-version': '2025-11-25' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list', params: {} }),
    });
    expect(list.status).toBe(200);
    expect(list.body).toContain('markdown-toc');
    expect(server().stderr()).not.toMatch(/"level":50/);
    expect(server().stderr()).not.toContain('http request failed');
  });
});
