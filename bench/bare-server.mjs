// The floor any SDK-based server starts from: a bare SDK v2 server with 100 trivial tools, served over stdio for
// both protocol eras exactly like skills-mcp (serveStdio). Used by startup.bench.mjs; not part of the product.
import process from 'node:process';
import { McpServer } from '@modelcontextprotocol/server';
import { serveStdio } from '@modelcontextprotocol/server/stdio';
import * as z from 'zod';

const TOOLS = 100;
const input = z.object({});

const build = () => {
  const server = new McpServer({ name: 'bare-bench', version: '1.0.0' });
  for (let i = 0; i < TOOLS; i++) {
    const name = `tool_${String(i).padStart(3, '0')}`;
    server.registerTool(
      name,
      {
        title: `Tool ${i}`,
        description: `Trivial tool number ${i}: returns "ok". Exists only to give the server a realistic tool list.`,
        inputSchema: input,
        annotations: { readOnlyHint: true, openWorldHint: false },
      },
      () => ({ content: [{ type: 'text', text: 'ok' }] }),
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
