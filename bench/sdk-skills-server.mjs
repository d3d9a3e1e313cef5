// The SDK's own folder-backed Skills extension server (`loadSkills` from @modelcontextprotocol/server/ext/skills/node):
// it walks and hashes every skill file at start-up, then serves skills/list from memory. Served over stdio for both
// protocol eras (serveStdio). Used by skills-extension.bench.mjs as the reference; not part of the product.
// Usage: node bench/sdk-skills-server.mjs <skills folder>
import process from 'node:process';
import { McpServer } from '@modelcontextprotocol/server';
import { loadSkills } from '@modelcontextprotocol/server/ext/skills/node';
import { serveStdio } from '@modelcontextprotocol/server/stdio';

const skills = await loadSkills(process.argv[2], {
  onWarning: (w) => void process.stderr.write(`sdk-skills-server: ${w.path}: ${w.message}\n`),
});
const handle = serveStdio(() => {
  const server = new McpServer({ name: 'sdk-skills-bench', version: '1.0.0' });
  skills.attach(server);
  return server;
});
const stop = () => void handle.close().finally(() => process.exit(0));
process.stdin.once('end', stop);
process.stdin.once('close', stop);
process.once('SIGTERM', stop);
process.once('SIGINT', stop);
