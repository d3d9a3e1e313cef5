import { realpathSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { HELP } from './help.js';
import type { CliIo, ExitCode } from './io.js';
import { defined, resolveConfig } from './resolve-config.js';
import { packageRoot } from '../package-root.js';
import { CLIENTS, CODEX_TOKEN_VAR, localSnippet, remoteSnippet, type Client } from './client-snippet.js';
import { CONFIG_OPTIONS } from './command-options.js';
import { parseOptions } from './option-table.js';

const WHERE: Record<Client, string> = {
  'claude-desktop':
    'Add to claude_desktop_config.json (macOS: ~/Library/Application Support/Claude/, Windows: %APPDATA%\\Claude\\), then restart Claude Desktop:',
  cursor: 'Add to .cursor/mcp.json in your project, or ~/.cursor/mcp.json for every project:',
  cline: 'Add to cline_mcp_settings.json (Cline → MCP Servers → Configure):',
  vscode: 'Add to .vscode/mcp.json in your workspace:',
  'claude-code': 'Run in your project:',
  codex:
    'Add to ~/.codex/config.toml (or .codex/config.toml in a trusted project), then check with "codex mcp list":',
  gemini:
    'Add to ~/.gemini/settings.json (or .gemini/settings.json in your project), then check with "gemini mcp list".\n' +
    'Gemini CLI shows no approval forms: scripts run there only where a policy rule allows them, or through the approval console.',
  windsurf:
    'Add to ~/.codeium/windsurf/mcp_config.json (Windows: %USERPROFILE%\\.codeium\\windsurf\\), then refresh the MCP servers in Cascade:',
  zed: 'Add to Zed\'s settings.json (command palette: "zed: open settings"):',
};

export function runClientConfig(args: string[], io: CliIo): ExitCode {
  const { values, positionals } = parseArgs({
    args,
    options: parseOptions(CONFIG_OPTIONS),
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
  io.err(`${WHERE[client]}\n`);
  io.out(`${localSnippet(client, name, entry)}\n`);
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
  // reach a loopback port), so every snippet carries the token to fill in.
  io.err(`${WHERE[client]}\n`);
  io.err(
    client === 'codex'
      ? `Codex reads the token from the environment: export ${CODEX_TOKEN_VAR} (the server's token) before starting it.\n`
      : "Replace <token> with the server's token (its --token-file or SKILLS_MCP_TOKEN).\n",
  );
  io.out(`${remoteSnippet(client, name, url)}\n`);
  return 0;
}
