// The floor for the HTTP bench: a bare SDK v2 Streamable HTTP server on loopback with one trivial read-only tool
// (named like the skill tool the bench calls, returning "ok"), serving both protocol eras the way skills-mcp does:
// 2025-era requests in sessions (one NodeStreamableHTTPServerTransport per session), 2026-era requests through the
// stateless handler. No auth, no limits, no audit. Prints its URL on stderr like skills-mcp; GET /healthz answers
// {"sessions": n}. Used by http.bench.mjs; not part of the product. Usage: node bench/bare-http-server.mjs
// BARE_ANSWER_FILE=<a CallToolResult in JSON>: the tool answers that instead of "ok" (a shallow copy per call, as
// skills-mcp answers a skill's view), so the bench can tell what a larger answer costs a bare server and its clients.
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import process from 'node:process';
import { NodeStreamableHTTPServerTransport, toNodeHandler, toWebRequest } from '@modelcontextprotocol/node';
import { McpServer, createMcpHandler, isLegacyRequest } from '@modelcontextprotocol/server';
import * as z from 'zod';

const TOOL = 'markdown-toc';
const input = z.object({});
const answerFile = process.env.BARE_ANSWER_FILE;
const answer =
  answerFile === undefined || answerFile === ''
    ? { content: [{ type: 'text', text: 'ok' }] }
    : JSON.parse(readFileSync(answerFile, 'utf8'));

const build = () => {
  const server = new McpServer({ name: 'bare-http-bench', version: '1.0.0' });
  server.registerTool(
    TOOL,
    {
      description: answerFile ? 'Returns a fixed answer.' : 'Trivial tool: returns "ok".',
      inputSchema: input,
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    () => ({ ...answer }),
  );
  return server;
};

const sessions = new Map();
const modern = toNodeHandler(createMcpHandler(build, { legacy: 'reject' }));

async function legacy(req, res, body) {
  const id = req.headers['mcp-session-id'];
  if (typeof id === 'string') {
    const s = sessions.get(id);
    if (s === undefined) return void res.writeHead(404).end();
    return s.transport.handleRequest(req, res, body);
  }
  const sessionId = randomUUID();
  const transport = new NodeStreamableHTTPServerTransport({ sessionIdGenerator: () => sessionId });
  const server = build();
  transport.onclose = () => sessions.delete(sessionId);
  await server.connect(transport);
  sessions.set(sessionId, { transport, server });
  await transport.handleRequest(req, res, body);
  if (transport.sessionId === undefined) {
    sessions.delete(sessionId);
    await server.close();
  }
}

const http = createServer((req, res) => {
  if (req.url === '/healthz') {
    res
      .writeHead(200, { 'content-type': 'application/json' })
      .end(JSON.stringify({ sessions: sessions.size }));
    return;
  }
  if (req.url !== '/mcp') return void res.writeHead(404).end();
  void (async () => {
    const request = await toWebRequest(req);
    const body = request.method === 'POST' ? JSON.parse(await request.text()) : undefined;
    if (await isLegacyRequest(request, body)) return legacy(req, res, body);
    return modern(req, res, body);
  })().catch((err) => {
    process.stderr.write(`bare-http-server: ${err instanceof Error ? err.message : String(err)}\n`);
    if (!res.headersSent) res.writeHead(500).end();
  });
});
http.listen(0, '127.0.0.1', () => {
  process.stderr.write(
    `bare-http-server: over Streamable HTTP at http://127.0.0.1:${http.address().port}/mcp\n`,
  );
});
const stop = () => http.close(() => process.exit(0)) && http.closeAllConnections();
process.once('SIGTERM', stop);
process.once('SIGINT', stop);
