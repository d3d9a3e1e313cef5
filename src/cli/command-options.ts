import type { OptionTable } from './option-table.js';

/** `skills-mcp serve`: the options `parseArgs` reads and `--help` lists (src/cli/help.ts), in one table. */
export const SERVE_OPTIONS = {
  skills: {
    type: 'string',
    multiple: true,
    value: 'DIR',
    description:
      'skills folder, or "auto" for the agent hosts\' skill folders; repeatable; a name claimed twice serves neither folder',
  },
  config: {
    type: 'string',
    value: 'FILE',
    description: 'config file',
    default: './skills-mcp.yaml when present',
  },
  tools: {
    type: 'string',
    value: 'MODE',
    description: 'per-skill | compact | auto',
    default: 'auto: per-skill up to 30 skills',
  },
  workspace: {
    type: 'string',
    value: 'DIR',
    description: 'a folder skills may read at the same path inside the sandbox',
  },
  audit: {
    type: 'string',
    value: 'PATH',
    description: 'audit database',
    default: '$XDG_STATE_HOME/skills-mcp/audit.db',
  },
  'no-elicitation': {
    type: 'boolean',
    description: 'never ask approvals through the client; use the configured fallback',
  },
  'approval-console': {
    type: 'boolean',
    description:
      'ask approvals on a local web page (127.0.0.1, secret URL) when the client cannot show them (or with ' +
      '--no-elicitation); the page also lists recent calls',
  },
  'no-watch': { type: 'boolean', description: 'do not reload skills when their files change' },
  'log-level': {
    type: 'string',
    value: 'LEVEL',
    description: 'trace | debug | info | warn | error | fatal | silent',
    default: 'warn over stdio, info over HTTP',
  },
  http: { type: 'boolean', description: 'serve Streamable HTTP instead of stdio' },
  host: {
    type: 'string',
    value: 'ADDR',
    description: 'HTTP bind address; any other than loopback requires a token or OAuth',
    default: '127.0.0.1',
  },
  port: {
    type: 'string',
    value: 'N',
    description: 'HTTP port (0 picks a free one, printed on stderr)',
    default: '3333',
  },
  'token-file': {
    type: 'string',
    value: 'FILE',
    description: 'file holding the bearer token HTTP clients must send (or SKILLS_MCP_TOKEN)',
  },
  'state-key-file': {
    type: 'string',
    value: 'FILE',
    description: 'secret (hex, >= 32 bytes, mode 600/640) replicas share to sign approval round trips',
  },
  'oauth-issuer': {
    type: 'string',
    value: 'URL',
    description: 'sign-in instead of a token: accept JWT access tokens of this issuer (http.oauth)…',
  },
  'oauth-resource': {
    type: 'string',
    value: 'URL',
    description: "…issued for this server's MCP endpoint URL (their audience), e.g. https://host/mcp",
  },
  'max-message-bytes': {
    type: 'string',
    value: 'N',
    description: 'largest message read over stdio',
    default: '16777216, 16 MiB',
  },
  help: { type: 'boolean', short: 'h', description: 'show this help' },
} as const satisfies OptionTable;

/** `skills-mcp run`: the options `parseArgs` reads and `--help` lists, in one table. */
export const RUN_OPTIONS = {
  input: {
    type: 'string',
    value: 'JSON|@file',
    description: 'the input; @file reads it from a file',
    default: '{}',
  },
  skills: {
    type: 'string',
    multiple: true,
    value: 'DIR',
    description: 'skills folder; repeatable',
    default: "the config's skills, else ./skills",
  },
  config: {
    type: 'string',
    value: 'FILE',
    description: 'config file',
    default: './skills-mcp.yaml when present',
  },
  audit: {
    type: 'string',
    value: 'PATH',
    description: 'audit database',
    default: '$XDG_STATE_HOME/skills-mcp/audit.db',
  },
  workspace: {
    type: 'string',
    value: 'DIR',
    description: 'a folder the skill may read at the same path inside the sandbox',
  },
  'log-level': {
    type: 'string',
    value: 'LEVEL',
    description: 'trace | debug | info | warn | error | fatal | silent',
    default: 'warn',
  },
  help: { type: 'boolean', short: 'h', description: 'show this help' },
} as const satisfies OptionTable;
