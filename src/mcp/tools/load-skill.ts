import * as z from 'zod';
import { findSkill } from '../read-skill-content.js';
import type { ServerDeps } from '../server-deps.js';
import { SkillViewSchema, skillView } from '../skill-view.js';
import { toolError } from '../tool-error.js';
import { READ_ONLY, type ToolDef } from './tool-def.js';
import { memoJsonSchema } from '../memo-json-schema.js';

const input = z.object({ skill: z.string().min(1).max(200).describe('Skill name from list_skills.') });

export const loadSkillTool = (deps: ServerDeps): ToolDef<z.infer<typeof input>> => ({
  name: 'load_skill',
  config: {
    title: 'Load a skill',
    description: "Load a skill's instructions and file index. Call list_skills first to see the names.",
    inputSchema: memoJsonSchema(input),
    outputSchema: memoJsonSchema(SkillViewSchema),
    annotations: READ_ONLY,
  },
  skillOf: ({ skill }) => skill,
  handler: ({ skill }) => {
    try {
      return skillView(deps, findSkill(deps.catalog(), skill), { canRunScripts: false });
    } catch (err) {
      return toolError(err, deps.log);
    }
  },
});
