// Runs an unpacked MCP Bundle as Claude Desktop would: the manifest's `mcp_config` resolved by the MCPB library's own
// `getMcpConfigForManifest` (the code Claude Desktop uses) with a person's settings, "node" replaced by the Node binary
// given (the host runs node bundles on the Node it ships), then the real MCP client over stdio: the tools, a skill
// read, and a sandboxed script run approved through the client's form. Checks the audit log is on node:sqlite.
// Usage: node .ci/mcpb-smoke.mjs UNPACKED_DIR NODE_BINARY
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { getMcpConfigForManifest } from '@anthropic-ai/mcpb';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const [dir, nodeBinary] = process.argv.slice(2);
const fail = (message) => {
  console.error(`mcpb smoke: ${message}`);
  process.exit(1);
};
const manifest = JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8'));
const home = mkdtempSync(join(tmpdir(), 'skills-mcp-mcpb-home-'));
const config = await getMcpConfigForManifest({
  manifest,
  extensionPath: dir,
  systemDirs: { HOME: home, DESKTOP: home, DOCUMENTS: home, DOWNLOADS: home },
  userConfig: { skills: [join(dir, 'server', 'skills')], approval_console: false },
  pathSeparator: '/',
});
if (config === undefined) fail('the manifest gave no server config for these settings');
console.log(`mcpb smoke: ${config.command} ${config.args.map((a) => a.replace(dir, '<bundle>')).join(' ')}`);

const transport = new StdioClientTransport({
  command: config.command === 'node' ? nodeBinary : config.command,
  args: config.args,
  env: { PATH: process.env.PATH, HOME: home, XDG_STATE_HOME: join(home, 'state'), ...config.env },
  stderr: 'pipe',
});
let stderr = '';
transport.stderr?.on('data', (d) => (stderr += d));
const client = new Client(
  { name: 'mcpb-smoke', version: '1.0.0' },
  { capabilities: { elicitation: { form: {} } } },
);
const asked = [];
client.setRequestHandler('elicitation/create', (request) => {
  asked.push(request.params.message);
  return Promise.resolve({ action: 'accept', content: { decision: 'approved' } });
});
try {
  await client.connect(transport);
  const { tools } = await client.listTools();
  const names = tools.map((t) => t.name);
  console.log(`mcpb smoke: ${names.length} tools: ${names.join(', ')}`);
  if (!names.includes('csv-stats')) fail('the bundled csv-stats skill is not served');
  const input = JSON.parse(
    readFileSync(join(dir, 'server', 'skills', 'csv-stats', 'assets', 'example-input.json'), 'utf8'),
  );
  const run = await client.callTool({ name: 'csv-stats', arguments: input });
  const text = run.content.map((c) => c.text ?? '').join('\n');
  if (run.isError || !text.includes('"rows": 8')) fail(`csv-stats did not run:\n${text}\n${stderr}`);
  if (asked.length !== 1) fail(`expected one approval form, saw ${asked.length}`);
  console.log('mcpb smoke: csv-stats ran in the sandbox after one approval form: "rows": 8');
} finally {
  await client.close().catch(() => undefined);
}
if (/better-sqlite3|ExperimentalWarning/.test(stderr))
  fail(`stderr names better-sqlite3 or a warning:\n${stderr}`);
if (!existsSync(join(home, 'state', 'skills-mcp', 'audit.db'))) fail('no audit log in the state folder');
const verified = execFileSync(nodeBinary, [join(dir, 'server', 'dist', 'cli.js'), 'audit', 'verify'], {
  env: { PATH: process.env.PATH, HOME: home, XDG_STATE_HOME: join(home, 'state'), ...config.env },
  encoding: 'utf8',
});
console.log(`mcpb smoke: audit verify (node:sqlite): ${verified.trim().split('\n').at(-1)}`);
rmSync(home, { recursive: true, force: true });
