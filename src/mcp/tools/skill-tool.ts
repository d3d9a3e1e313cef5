import { escapeForDisplay } from '../../escape-for-display.js';
import * as z from 'zod';
import type { Skill } from '../../skills/types.js';
import type { ServerDeps } from '../server-deps.js';
import { skillView } from '../skill-view.js';
import { skillRemoved, toolError } from '../tool-error.js';
import { READ_ONLY, type ToolDef } from './tool-def.js';
import { memoJsonSchema } from '../memo-json-schema.js';

const input = z.object({});
const MAX_DESCRIPTION = 1024;

/**
 * The per-skill tool: returns the skill's instructions and file index. No output schema: it would repeat the same
 * bytes in tools/list once per skill; the result shape is documented (docs/clients.md) and the same as load_skill's.
 */
export const skillTool = (deps: ServerDeps, skill: Skill, canRunScripts: boolean): ToolDef => {
  const renamed = skill.toolName !== skill.name ? ` (skill "${skill.name}")` : '';
  const description =
    skill.description.length > MAX_DESCRIPTION
      ? `${skill.description.slice(0, MAX_DESCRIPTION - 1)}…`
      : skill.description;
  return {
    name: skill.toolName,
    config: {
      title: `Skill: ${escapeForDisplay(skill.name)}`,
      description: `${description}\n\nReturns the skill's instructions${renamed} and its file index.`,
      inputSchema: memoJsonSchema(input),
      annotations: READ_ONLY,
    },
    skillOf: () => skill.name,
    handler: () => {
      const current = deps.catalog().get(skill.name);
      if (current === undefined) {
        return skillRemoved(skill.name, deps.log);
      }
      try {
        return skillView(deps, current, { canRunScripts });
      } catch (err) {
        return toolError(err, deps.log);
      }
    },
  };
};
