import { ProtocolError, ProtocolErrorCode, type McpServer } from '@modelcontextprotocol/server';
import { isSkillsError } from '../../errors.js';
import type { Skill } from '../../skills/types.js';
import type { ServerDeps } from '../server-deps.js';
import { PromptArgsSchema, skillPromptEntry, skillPromptMessages } from './skill-prompt.js';

/** The skill prompts of one server instance. */
export interface SkillPrompts {
  /** Serves the skill's prompt under its tool name; throws when that name is taken. */
  add(skill: Skill): void;
  remove(name: string): void;
}

/**
 * Serves one prompt per skill from a map, with the same prompts/list and prompts/get answers the SDK gives for
 * registered prompts (its errors included), without one SDK registration — its closures, handler and argument
 * schema checks — per skill and per connection: with 10,000 skills those took ~6.5 MiB and ~100 ms at each start.
 * Like the SDK, the handlers and the `prompts` capability are set up with the first prompt, and every change is
 * announced with prompts/list_changed once the server is connected.
 */
export function serveSkillPrompts(server: McpServer, deps: ServerDeps): SkillPrompts {
  const prompts = new Map<string, Skill>();
  let handlers = false;
  const setUpHandlers = () => {
    const low = server.server;
    low.registerCapabilities({
      prompts: { listChanged: low.getCapabilities().prompts?.listChanged ?? true },
    });
    low.setRequestHandler('prompts/list', () => ({ prompts: [...prompts.values()].map(skillPromptEntry) }));
    low.setRequestHandler('prompts/get', (request) => {
      const { name, arguments: args } = request.params;
      const skill = prompts.get(name);
      if (skill === undefined)
        throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Prompt ${name} not found`);
      const parsed = PromptArgsSchema.safeParse(args ?? {});
      if (!parsed.success) {
        const issues = parsed.error.issues.map((i) =>
          i.path.length === 0 ? i.message : `${i.path.map(String).join('.')}: ${i.message}`,
        );
        throw new ProtocolError(
          ProtocolErrorCode.InvalidParams,
          `Invalid arguments for prompt ${name}: ${issues.join(', ')}`,
        );
      }
      try {
        return skillPromptMessages(deps, skill, parsed.data);
      } catch (err) {
        if (!isSkillsError(err)) throw err;
        throw new ProtocolError(
          ProtocolErrorCode.InvalidParams,
          `Prompt ${name}: ${err.message}${err.hint === undefined ? '' : ` (${err.hint})`}`,
        );
      }
    });
    handlers = true;
  };
  return {
    add: (skill) => {
      if (prompts.has(skill.toolName)) throw new Error(`Prompt ${skill.toolName} is already registered`);
      if (!handlers) setUpHandlers();
      prompts.set(skill.toolName, skill);
      server.sendPromptListChanged();
    },
    remove: (name) => {
      if (prompts.delete(name)) server.sendPromptListChanged();
    },
  };
}
