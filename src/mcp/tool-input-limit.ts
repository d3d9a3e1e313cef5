import type { CallToolResult } from '@modelcontextprotocol/server';
import { SkillsError } from '../errors.js';
import type { Logger } from '../log.js';
import { toolError } from './tool-error.js';

/** Largest tool input accepted: the call's arguments as JSON (UTF-8), in bytes. Same as the HTTP body limit. */
export const MAX_TOOL_INPUT_BYTES = 4 * 1024 * 1024;

/** Deepest nesting of arrays and objects a tool input may have (the arguments object is level 1). */
export const MAX_TOOL_INPUT_DEPTH = 64;

/** Whether `value` nests deeper than `max`, found without recursion (no input can exhaust the stack here). */
function nestsDeeper(value: unknown, max: number): boolean {
  const stack: [unknown, number][] = [[value, 1]];
  for (let top = stack.pop(); top !== undefined; top = stack.pop()) {
    const [v, depth] = top;
    if (typeof v !== 'object' || v === null) continue;
    if (depth > max) return true;
    for (const child of Array.isArray(v) ? v : Object.values(v)) {
      if (typeof child === 'object' && child !== null) stack.push([child, depth + 1]);
    }
  }
  return false;
}

/** A tool error for arguments over the limits, returned before any work is done for the call; else undefined. */
export function refuseLargeInput(tool: string, args: unknown, log: Logger): CallToolResult | undefined {
  if (nestsDeeper(args, MAX_TOOL_INPUT_DEPTH)) {
    log.warn({ tool, limit: MAX_TOOL_INPUT_DEPTH }, 'tool input nested too deep refused');
    return toolError(
      new SkillsError(
        'INPUT_TOO_LARGE',
        `The input of ${tool} nests arrays or objects more than ${MAX_TOOL_INPUT_DEPTH} levels deep; tool inputs may nest at most ${MAX_TOOL_INPUT_DEPTH} levels.`,
        { hint: 'Nothing was run or asked. Flatten the data, or pass it in a file the skill reads.' },
      ),
      log,
    );
  }
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
