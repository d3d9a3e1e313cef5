import type { ConfigInput } from '../config/config-schema.js';

/**
 * Picks SKILLS_MCP_* variables into partial config: the only place they become config values (the bearer token,
 * SKILLS_MCP_TOKEN, is not config: `readToken` in serve-http.ts reads it).
 */
export function configFromEnv(env: NodeJS.ProcessEnv): { values: Partial<ConfigInput>; configFile?: string } {
  const values: Record<string, unknown> = {};
  if (env.SKILLS_MCP_SKILLS) values.skills = env.SKILLS_MCP_SKILLS.split(':').filter(Boolean);
  if (env.SKILLS_MCP_TOOLS) values.tools = env.SKILLS_MCP_TOOLS;
  if (env.SKILLS_MCP_WORKSPACE) values.workspace = env.SKILLS_MCP_WORKSPACE;
  if (env.SKILLS_MCP_AUDIT) values.audit = env.SKILLS_MCP_AUDIT;
  if (env.SKILLS_MCP_AUDIT_SQLITE_DRIVER) values.audit_sqlite_driver = env.SKILLS_MCP_AUDIT_SQLITE_DRIVER;
  if (env.SKILLS_MCP_LOG_LEVEL) values.log_level = env.SKILLS_MCP_LOG_LEVEL;
  if (env.SKILLS_MCP_MAX_MESSAGE_BYTES) values.max_message_bytes = Number(env.SKILLS_MCP_MAX_MESSAGE_BYTES);
  if (env.SKILLS_MCP_STATE_KEY_FILE) values.http = { state_key_file: env.SKILLS_MCP_STATE_KEY_FILE };
  if (env.SKILLS_MCP_NO_ELICITATION === '1' || env.SKILLS_MCP_NO_ELICITATION === 'true')
    values.elicitation = false;
  return env.SKILLS_MCP_CONFIG ? { values: values, configFile: env.SKILLS_MCP_CONFIG } : { values: values };
}
