// The floor any SDK-based server starts from: a bare SDK v2 server with 100 trivial tools, served over stdio for
// both protocol eras exactly like skills-mcp (serveStdio). Used by startup.bench.mjs; not part of the product.
// BARE_ANSWER_FILE=<a CallToolResult in JSON>: every tool answers that instead of "ok" (a shallow copy per call, as
// skills-mcp answers a skill's view), so the bench can tell what a larger answer costs a bare server and its client.
import { readFileSync } from 'node:fs';
import process from 'node:process';
import { McpServer } from '@modelcontextprotocol/server';
import { serveStdio } from '@modelcontextprotocol/server/stdio';
import * as z from 'zod';

const TOOLS = 100;
const input = z.object({});
const answerFile = process.env.BARE_ANSWER_FILE;
const fixed = answerFile ? JSON.parse(readFileSync(answerFile, 'utf8')) : undefined;
const answer =
  fixed === undefined ? () => ({ content: [{ type: 'text', text: 'ok' }] }) : () => ({ ...fixed });

const build = () => {
  const server = new McpServer({ name: 'bare-bench', version: '1.0.0' });
  for (let i = 0; i < TOOLS; i++) {
    const name = `tool_${String(i).padStart(3, '0')}`;
    server.registerTool(
      name,
      {
        title: `Tool ${i}`,
        description: fixed
          ? `Tool number ${i}: returns a fixed answer. Exists only to give the server a realistic tool list.`
          : `Trivial tool number ${i}: returns "ok". Exists only to give the server a realistic tool list.`,
        inputSchema: input,
        annotations: { readOnlyHint: true, openWorldHint: false },
      },
      answer,
    );
  }
  return server;
};

const handle = serveStdio(build, {
  onerror: (err) => void process.stderr.write(`bare-server: ${err.message}\n`),
});
// The SDK's stdio transport closes itself at stdin EOF; make the exit explicit so no handle can keep us alive.
const stop = () => void handle.close().finally(() => process.exit(0));
process.stdin.once('end', stop);
process.stdin.once('close', stop);
process.once('SIGTERM', stop);
process.once('SIGINT', stop);
