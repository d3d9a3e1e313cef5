import * as z from 'zod';

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
  watch: z
    .boolean()
    .default(true)
    .describe('Reload skills when their files change and notify clients (list_changed).'),
});

export type Config = z.infer<typeof ConfigSchema>;
export type ConfigInput = z.input<typeof ConfigSchema>;
