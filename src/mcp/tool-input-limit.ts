import type { CallToolResult } from '@modelcontextprotocol/server';
import { SkillsError } from '../errors.js';
import type { Logger } from '../log.js';
import { toolError } from './tool-error.js';

/** Largest tool input accepted: the call's arguments as JSON (UTF-8), in bytes. Same as the HTTP body limit. */
export const MAX_TOOL_INPUT_BYTES = 4 * 1024 * 1024;

/** A tool error for arguments over the limit, returned before any work is done for the call; else undefined. */
export function refuseLargeInput(tool: string, args: unknown, log: Logger): CallToolResult | undefined {
  const bytes = Buffer.byteLength(JSON.stringify(args ?? {}), 'utf8');
  if (bytes <= MAX_TOOL_INPUT_BYTES) return undefined;
  log.warn({ tool, bytes, limit: MAX_TOOL_INPUT_BYTES }, 'tool input over the size limit refused');
  const mib = (n: number) => `${(n / 1048576).toFixed(1)} MiB`;
  return toolError(
    new SkillsError(
      'INPUT_TOO_LARGE',
      `The input of ${tool} is ${mib(bytes)} (${bytes} bytes) as JSON; tool inputs are limited to 4 MiB (${MAX_TOOL_INPUT_BYTES} bytes).`,
      {
        hint: 'Pass large data by reference instead (e.g. a file path in the workspace the skill can read), or split it over several calls.',
      },
    ),
    log,
  );
}
