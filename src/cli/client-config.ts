import { realpathSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { HELP } from './help.js';
import type { CliIo, ExitCode } from './io.js';
import { defined, resolveConfig } from './resolve-config.js';
import { packageRoot } from './version.js';

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
