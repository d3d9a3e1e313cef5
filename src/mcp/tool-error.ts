import { randomBytes } from 'node:crypto';
import type { CallToolResult } from '@modelcontextprotocol/server';
import { isSkillsError, SkillsError } from '../errors.js';
import type { Logger } from '../log.js';

/**
 * The one place errors become tool results. Expected failures (SkillsError) carry an actionable message and hint;
 * anything else is logged with a reference id and the client sees only "internal error (ref …)".
 */
export function toolError(err: unknown, log: Logger): CallToolResult {
  if (isSkillsError(err)) {
    const text = `${err.message}${err.hint === undefined ? '' : `\nHint: ${err.hint}`}`;
    return { isError: true, content: [{ type: 'text', text }], _meta: { 'skills-mcp/code': err.code } };
  }
  const ref = randomBytes(4).toString('hex');
  log.error({ err, ref }, 'unexpected error in a tool call');
  return {
    isError: true,
    content: [{ type: 'text', text: `internal error (ref ${ref}); the server log has the details` }],
  };
}

/** The answer of a per-skill tool whose skill left the catalog since the client listed the tools. */
export const skillRemoved = (name: string, log: Logger): CallToolResult =>
  toolError(
    new SkillsError('SKILL_NOT_FOUND', `skill "${name}" was removed`, { hint: 'List the tools again.' }),
    log,
  );
