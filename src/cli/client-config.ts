import { realpathSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { HELP } from './help.js';
import type { CliIo, ExitCode } from './io.js';
import { defined, resolveConfig } from './resolve-config.js';
import { packageRoot } from '../package-root.js';

export const CLIENTS = ['claude-desktop', 'cursor', 'cline', 'vscode', 'claude-code'] as const;
type Client = (typeof CLIENTS)[number];

const WHERE: Record<Client, string> = {
  'claude-desktop':
    'Add to claude_desktop_config.json (macOS: ~/Library/Application Support/Claude/, Windows: %APPDATA%\\Claude\\), then restart Claude Desktop:',
  cursor: 'Add to .cursor/mcp.json in your project, or ~/.cursor/mcp.json for every project:',
  cline: 'Add to cline_mcp_settings.json (Cline → MCP Servers → Configure):',
  vscode: 'Add to .vscode/mcp.json in your workspace:',
  'claude-code': 'Run in your project:',
};

const shellQuote = (s: string) => (/^[\w@%+=:,./-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`);

export function runClientConfig(args: string[], io: CliIo): ExitCode {
  const { values, positionals } = parseArgs({
    args,
    options: {
      skills: { type: 'string', multiple: true },
      config: { type: 'string' },
      name: { type: 'string' },
      npx: { type: 'boolean' },
      http: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
    allowPositionals: true,
    strict: true,
  });
  if (values.help) {
    io.out(`${HELP.config}\n`);
    return 0;
  }
  const client = positionals[0] as Client | undefined;
  if (client === undefined || !CLIENTS.includes(client) || positionals.length > 1) {
    io.err(`skills-mcp config: name one client: ${CLIENTS.join(', ')}\n`);
    return 2;
  }
  const name = values.name ?? 'skills';
  if (!/^[a-zA-Z0-9_-]{1,40}$/.test(name)) {
    io.err('skills-mcp config: --name must be 1–40 chars of letters, digits, _ and -\n');
    return 2;
  }
  if (values.http !== undefined) {
    if (values.skills !== undefined || values.npx === true) {
      io.err('skills-mcp config: --http points at a running server; --skills and --npx do not apply\n');
      return 2;
    }
    return printRemoteSnippet(client, name, values.http, io);
  }
  const loaded = resolveConfig(io, defined({ skills: values.skills }), values.config);
  if (loaded === undefined) return 2;
  const skills = loaded.config.skills.length > 0 ? loaded.config.skills : [resolve(io.cwd, 'skills')];
  const serverArgs = skills.flatMap((s) => ['--skills', s]);
  const fromPackage = values.npx === true || packageRoot().includes('/node_modules/');
  const command = fromPackage ? 'npx' : process.execPath;
  const args0 = fromPackage ? ['-y', 'skills-mcp'] : [realpathSync(join(packageRoot(), 'dist', 'cli.js'))];
  const entry = { command, args: [...args0, ...serverArgs] };
  let snippet: string;
  switch (client) {
    case 'claude-desktop':
    case 'cursor':
      snippet = JSON.stringify({ mcpServers: { [name]: entry } }, null, 2);
      break;
    case 'cline':
      snippet = JSON.stringify(
        { mcpServers: { [name]: { ...entry, disabled: false, autoApprove: [] } } },
        null,
        2,
      );
      break;
    case 'vscode':
      snippet = JSON.stringify({ servers: { [name]: { type: 'stdio', ...entry } } }, null, 2);
      break;
    case 'claude-code':
      snippet = ['claude', 'mcp', 'add', name, '--', entry.command, ...entry.args].map(shellQuote).join(' ');
      break;
  }
  io.err(`${WHERE[client]}\n`);
  io.out(`${snippet}\n`);
  return 0;
}

/** Snippets for a running `skills-mcp --http`: each client's own spelling of a Streamable HTTP entry. */
function printRemoteSnippet(client: Client, name: string, url: string, io: CliIo): ExitCode {
  const parsed = URL.canParse(url) ? new URL(url) : undefined;
  if (parsed === undefined || (parsed.protocol !== 'http:' && parsed.protocol !== 'https:')) {
    io.err(
      `skills-mcp config: --http needs an http(s) URL such as http://127.0.0.1:3333/mcp, got "${url}"\n`,
    );
    return 2;
  }
  // Loopback too: over HTTP a client's approval form counts only when the server has a token (any local program can
  // reach a loopback port), so every snippet carries the header to fill in.
  const headers = { headers: { Authorization: 'Bearer <token>' } };
  let snippet: string;
  switch (client) {
    case 'claude-desktop':
    case 'cursor':
      snippet = JSON.stringify({ mcpServers: { [name]: { url, ...headers } } }, null, 2);
      break;
    case 'cline':
      snippet = JSON.stringify(
        {
          mcpServers: {
            [name]: { type: 'streamableHttp', url, ...headers, disabled: false, autoApprove: [] },
          },
        },
        null,
        2,
      );
      break;
    case 'vscode':
      snippet = JSON.stringify({ servers: { [name]: { type: 'http', url, ...headers } } }, null, 2);
      break;
    case 'claude-code':
      snippet = ['claude', 'mcp', 'add', '--transport', 'http', name, url]
        .concat(['--header', 'Authorization: Bearer <token>'])
        .map(shellQuote)
        .join(' ');
      break;
  }
  io.err(`${WHERE[client]}\n`);
  io.err("Replace <token> with the server's token (its --token-file or SKILLS_MCP_TOKEN).\n");
  io.out(`${snippet}\n`);
  return 0;
}
