import * as z from 'zod';
import { ApprovalConfigSchema } from './approval-schema.js';

export const TOOL_MODES = ['per-skill', 'compact', 'auto'] as const;
export const LOG_LEVELS = ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'] as const;

/**
 * skills-mcp configuration. Layered: defaults < config file (skills-mcp.yaml) < SKILLS_MCP_* env < flags.
 * The README's configuration table is generated from these descriptions (`npm run check` fails on drift).
 */
export const ConfigSchema = z.strictObject({
  skills: z
    .array(z.string().min(1))
    .default([])
    .describe(
      'Skills folders to serve (flag --skills, repeatable; env SKILLS_MCP_SKILLS, ":"-separated). First root wins on duplicate names.',
    ),
  tools: z
    .enum(TOOL_MODES)
    .default('auto')
    .describe(
      'Tool layout: one tool per skill, compact (list_skills + load_skill), or auto (per-skill up to 30 skills).',
    ),
  elicitation: z
    .boolean()
    .default(true)
    .describe(
      'Ask approvals through MCP elicitation when the client supports it; false (--no-elicitation) forces the fallback.',
    ),
  workspace: z
    .string()
    .min(1)
    .optional()
    .describe(
      'A folder skills may read (and write, when policy grants it) at the same path inside the sandbox.',
    ),
  audit: z
    .string()
    .min(1)
    .optional()
    .describe('Audit database path. Default: $XDG_STATE_HOME/skills-mcp/audit.db (~/.local/state/…).'),
  log_level: z.enum(LOG_LEVELS).default('info').describe('Log level on stderr.'),
  approval: ApprovalConfigSchema.prefault({}).describe(
    'Who decides whether a skill script may run (see Approvals).',
  ),
  sandbox: z
    .strictObject({
      profile: z
        .string()
        .regex(/^[a-z0-9-]+$/)
        .default('default')
        .describe(
          'Sandbox profile for skill scripts (a file in sandbox-profiles/); a skill may ask for a stricter one.',
        ),
      mode: z
        .enum(['required', 'off'])
        .default('required')
        .describe(
          'required: scripts run only inside an OS sandbox (else refused). off: no sandbox (logged, audited).',
        ),
      profiles_dir: z
        .string()
        .min(1)
        .optional()
        .describe('Folder of sandbox profiles (default: the bundled sandbox-profiles/).'),
    })
    .prefault({})
    .describe('OS sandbox for skill scripts.'),
  data_dir: z
    .string()
    .min(1)
    .optional()
    .describe('Where per-call output folders are kept. Default: the audit database folder + /runs.'),
  http: z
    .strictObject({
      enabled: z.boolean().default(false).describe('Serve Streamable HTTP instead of stdio (flag --http).'),
      host: z
        .string()
        .min(1)
        .default('127.0.0.1')
        .describe('Bind address (flag --host). Not loopback ⇒ a token is required.'),
      port: z
        .number()
        .int()
        .min(0)
        .max(65535)
        .default(3333)
        .describe('Port (flag --port); 0 picks a free one (logged).'),
      token_file: z
        .string()
        .min(1)
        .optional()
        .describe('File holding the bearer token (flag --token-file; or env SKILLS_MCP_TOKEN).'),
      allowed_hosts: z
        .array(z.string().min(1))
        .default([])
        .describe('Extra Host header values accepted (DNS-rebinding guard).'),
      allowed_origins: z
        .array(z.string().min(1))
        .default([])
        .describe('Extra Origin values accepted (browser clients).'),
    })
    .prefault({})
    .describe('Streamable HTTP transport.'),
  watch: z
    .boolean()
    .default(true)
    .describe('Reload skills when their files change and notify clients (list_changed).'),
});

export type Config = z.infer<typeof ConfigSchema>;
export type ConfigInput = z.input<typeof ConfigSchema>;
