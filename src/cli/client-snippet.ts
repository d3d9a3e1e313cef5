export const CLIENTS = [
  'claude-desktop',
  'cursor',
  'cline',
  'vscode',
  'claude-code',
  'codex',
  'gemini',
  'windsurf',
  'zed',
] as const;
export type Client = (typeof CLIENTS)[number];

/** How a client starts the server: a program and its arguments. */
export interface LocalEntry {
  command: string;
  args: string[];
}

/** The environment variable Codex reads the bearer token from (it refuses a token written in its config). */
export const CODEX_TOKEN_VAR = 'SKILLS_MCP_TOKEN';

const shellQuote = (s: string) => (/^[\w@%+=:,./-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`);

// eslint-disable-next-line no-control-regex -- control characters are exactly what TOML forbids raw in a string
const TOML_ESCAPED = /[\\"\u0000-\u001f\u007f]/g;

/**
 * Codex starts its MCP servers while the first turn goes out, so without this the model may be offered no skill on
 * it; a required server is waited for (and one that fails to start stops Codex, with its error, rather than leaving
 * the person without approvals unawares).
 */
const CODEX_REQUIRED = 'required = true';

/** A TOML basic string: quotes, backslashes and control characters escaped. */
const tomlString = (s: string): string =>
  `"${s.replace(TOML_ESCAPED, (c) =>
    c === '\\' || c === '"' ? `\\${c}` : `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
  )}"`;

const json = (v: unknown) => JSON.stringify(v, null, 2);

/** What to paste for a server the client starts itself (stdio), in the client's own file format. */
export function localSnippet(client: Client, name: string, entry: LocalEntry): string {
  switch (client) {
    case 'claude-desktop':
    case 'cursor':
    case 'gemini':
    case 'windsurf':
      return json({ mcpServers: { [name]: entry } });
    case 'cline':
      return json({ mcpServers: { [name]: { ...entry, disabled: false, autoApprove: [] } } });
    case 'vscode':
      return json({ servers: { [name]: { type: 'stdio', ...entry } } });
    case 'zed':
      return json({ context_servers: { [name]: entry } });
    case 'codex':
      return [
        `[mcp_servers.${name}]`,
        `command = ${tomlString(entry.command)}`,
        `args = [${entry.args.map(tomlString).join(', ')}]`,
        CODEX_REQUIRED,
      ].join('\n');
    case 'claude-code':
      return ['claude', 'mcp', 'add', name, '--', entry.command, ...entry.args].map(shellQuote).join(' ');
  }
}

/** What to paste for a running `skills-mcp --http` at `url`; every entry carries the bearer token to fill in. */
export function remoteSnippet(client: Client, name: string, url: string): string {
  const headers = { headers: { Authorization: 'Bearer <token>' } };
  switch (client) {
    case 'claude-desktop':
    case 'cursor':
      return json({ mcpServers: { [name]: { url, ...headers } } });
    case 'cline':
      return json({
        mcpServers: { [name]: { type: 'streamableHttp', url, ...headers, disabled: false, autoApprove: [] } },
      });
    case 'vscode':
      return json({ servers: { [name]: { type: 'http', url, ...headers } } });
    case 'gemini':
      return json({ mcpServers: { [name]: { httpUrl: url, ...headers } } });
    case 'windsurf':
      return json({ mcpServers: { [name]: { serverUrl: url, ...headers } } });
    case 'zed':
      return json({ context_servers: { [name]: { url, ...headers } } });
    case 'codex':
      return [
        `[mcp_servers.${name}]`,
        `url = ${tomlString(url)}`,
        `bearer_token_env_var = ${tomlString(CODEX_TOKEN_VAR)}`,
        CODEX_REQUIRED,
      ].join('\n');
    case 'claude-code':
      return ['claude', 'mcp', 'add', '--transport', 'http', name, url]
        .concat(['--header', 'Authorization: Bearer <token>'])
        .map(shellQuote)
        .join(' ');
  }
}
