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

const AUDIT_PATH = {
  type: 'string',
  value: 'PATH',
  description: 'audit database (its folder holds the state this command reads)',
  default: '$XDG_STATE_HOME/skills-mcp/audit.db',
} as const;
const CONFIG_FILE = {
  type: 'string',
  value: 'FILE',
  description: 'config file',
  default: './skills-mcp.yaml when present',
} as const;
const DRY_RUN = { type: 'boolean', description: 'only count what would be removed' } as const;
const HELP_FLAG = { type: 'boolean', short: 'h', description: 'show this help' } as const;

/** `skills-mcp runs prune`. */
export const RUNS_OPTIONS = {
  'older-than': {
    type: 'string',
    value: 'DAYS',
    description: 'remove call folders last changed more than DAYS ago',
    default: 'runs.retention_days, 7',
  },
  'dry-run': DRY_RUN,
  audit: AUDIT_PATH,
  config: CONFIG_FILE,
  help: HELP_FLAG,
} as const satisfies OptionTable;

/** `skills-mcp sources list|update`. */
export const SOURCES_OPTIONS = {
  audit: AUDIT_PATH,
  config: CONFIG_FILE,
  help: HELP_FLAG,
} as const satisfies OptionTable;

/** `skills-mcp bundles prune`. */
export const BUNDLES_OPTIONS = {
  'unused-for': {
    type: 'string',
    value: 'DAYS',
    description: 'remove copies no run used for DAYS days',
    default: 'runs.bundle_retention_days, 14',
  },
  'dry-run': DRY_RUN,
  audit: AUDIT_PATH,
  config: CONFIG_FILE,
  help: HELP_FLAG,
} as const satisfies OptionTable;

/** `skills-mcp deps list|install|prune`. */
export const DEPS_OPTIONS = {
  skills: {
    type: 'string',
    multiple: true,
    value: 'DIR',
    description: 'skills folder; repeatable',
    default: "the config's skills, else ./skills",
  },
  config: CONFIG_FILE,
  audit: { ...AUDIT_PATH, description: 'audit database the installs are recorded in (the server’s)' },
  json: { type: 'boolean', description: 'list as JSON' },
  help: HELP_FLAG,
} as const satisfies OptionTable;

/** `skills-mcp config <client>`. */
export const CONFIG_OPTIONS = {
  skills: {
    type: 'string',
    multiple: true,
    value: 'DIR',
    description: 'skills folder(s) to serve',
    default: "the config's skills, else ./skills",
  },
  config: CONFIG_FILE,
  name: { type: 'string', value: 'NAME', description: 'server name in the client', default: 'skills' },
  npx: {
    type: 'boolean',
    description: 'launch with "npx -y skills-mcp" instead of this installation\'s node + cli path',
  },
  http: {
    type: 'string',
    value: 'URL',
    description:
      'connect to a running "skills-mcp --http" at URL (e.g. http://127.0.0.1:3333/mcp); the snippet carries an ' +
      "Authorization header to fill in with the server's token",
  },
  help: HELP_FLAG,
} as const satisfies OptionTable;

/** `skills-mcp lint DIR…`. */
export const LINT_OPTIONS = {
  json: { type: 'boolean', description: 'print the findings as JSON' },
  help: HELP_FLAG,
} as const satisfies OptionTable;

/** `skills-mcp doctor`. */
export const DOCTOR_OPTIONS = {
  json: { type: 'boolean', description: 'print one JSON object instead of text' },
  profiles: {
    type: 'string',
    value: 'DIR',
    description: 'sandbox profiles folder',
    default: 'the one shipped with skills-mcp',
  },
  help: HELP_FLAG,
} as const satisfies OptionTable;

/** `skills-mcp console`. */
export const CONSOLE_OPTIONS = {
  audit: { ...AUDIT_PATH, description: 'the audit database of the server whose link to print' },
  config: CONFIG_FILE,
  help: HELP_FLAG,
} as const satisfies OptionTable;

/** `skills-mcp approvers`. */
export const APPROVERS_OPTIONS = {
  name: {
    type: 'string',
    value: 'LABEL',
    description: 'enroll: who or which device the passkey is (shown by approvers list)',
    default: 'the user name',
  },
  subject: {
    type: 'string',
    value: 'SUBJECT',
    description:
      "enroll: the person's sign-in subject (OAuth sub); needed to approve calls that require four eyes",
  },
  audit: {
    ...AUDIT_PATH,
    description:
      'the audit database whose state folder holds approvers.json (a PostgreSQL one holds the passkeys itself)',
  },
  config: CONFIG_FILE,
  help: HELP_FLAG,
} as const satisfies OptionTable;

/** `skills-mcp list`. */
export const LIST_OPTIONS = {
  skills: {
    type: 'string',
    multiple: true,
    value: 'DIR',
    description: 'skills folder, or auto for the host skill folders found; repeatable',
    default: "the config's skills",
  },
  config: CONFIG_FILE,
  json: { type: 'boolean', description: 'print the skills as JSON' },
  help: HELP_FLAG,
} as const satisfies OptionTable;
