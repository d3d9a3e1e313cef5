import { ProtocolError, ProtocolErrorCode, type McpServer } from '@modelcontextprotocol/server';
import { isSkillsError } from '../../errors.js';
import type { Skill } from '../../skills/types.js';
import type { ServerDeps } from '../server-deps.js';
import { PromptArgsSchema, skillPromptEntry, skillPromptMessages } from './skill-prompt.js';

/** The skill prompts of one server instance: one per skill of the current catalog, under its tool name. */
export interface SkillPrompts {
  /** After a catalog change: serves the current catalog's prompts, and says so once connected. */
  changed(): void;
  /** Leaves a skill's prompt out (its tool could not be registered), or serves it again. */
  exclude(name: string): void;
  include(name: string): void;
}

/**
 * Serves one prompt per skill straight from the current catalog, with the same prompts/list and prompts/get
 * answers the SDK gives for registered prompts (its errors included), without registering anything per skill and
 * per connection: with 10,000 skills an SDK registration each took ~6.5 MiB and ~100 ms at each start, and a map of
 * them still ~15 ms. Like the SDK, the handlers and the `prompts` capability are set up once there is a prompt, and
 * every change is announced with prompts/list_changed once the server is connected.
 */
export function serveSkillPrompts(server: McpServer, deps: ServerDeps): SkillPrompts {
  const excluded = new Set<string>();
  // prompts/list shows what a skill file decides (names, descriptions): it need not wait for the catalog's check.
  const headline = deps.headline ?? deps.catalog;
  const served = (name: string): Skill | undefined => {
    const skill = deps.catalog().byToolName(name);
    return skill === undefined || excluded.has(skill.name) ? undefined : skill;
  };
  let handlers = false;
  const setUpHandlers = () => {
    const low = server.server;
    low.registerCapabilities({
      prompts: { listChanged: low.getCapabilities().prompts?.listChanged ?? true },
    });
    low.setRequestHandler('prompts/list', () => ({
      prompts: headline()
        .skills.filter((s) => !excluded.has(s.name))
        .map(skillPromptEntry),
    }));
    low.setRequestHandler('prompts/get', (request) => {
      const { name, arguments: args } = request.params;
      const skill = served(name);
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
  const setUpIfAny = () => {
    if (!handlers && headline().skills.length > 0) setUpHandlers();
  };
  setUpIfAny();
  return {
    changed: () => {
      setUpIfAny();
      if (handlers) server.sendPromptListChanged();
    },
    exclude: (name) => void excluded.add(name),
    include: (name) => void excluded.delete(name),
  };
}
