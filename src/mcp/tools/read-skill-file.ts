import * as z from 'zod';
import { readSkillContent } from '../read-skill-content.js';
import type { ServerDeps } from '../server-deps.js';
import { skillUri } from '../skill-uri.js';
import { toolError } from '../tool-error.js';
import { READ_ONLY, type ToolDef } from './tool-def.js';
import { memoJsonSchema } from '../memo-json-schema.js';

export const MAX_TOOL_FILE_BYTES = 1024 * 1024;

const input = z.object({
  skill: z.string().min(1).max(200).describe('Skill name, as in the skill list.'),
  path: z
    .string()
    .min(1)
    .max(1000)
    .describe('File path relative to the skill folder, e.g. "references/guide.md".'),
});

export const readSkillFileTool = (deps: ServerDeps): ToolDef<z.infer<typeof input>> => ({
  name: 'read_skill_file',
  config: {
    title: 'Read a skill file',
    description: "Read a file of a skill (references, assets, scripts), contained to the skill's folder.",
    inputSchema: memoJsonSchema(input),
    annotations: READ_ONLY,
  },
  skillOf: ({ skill }) => skill,
  handler: ({ skill, path }) => {
    try {
      const c = readSkillContent(deps.catalog(), skill, path, MAX_TOOL_FILE_BYTES);
      const uri = skillUri(c.skill.name, c.path);
      if (c.text !== undefined) return { content: [{ type: 'text', text: c.text }] };
      return { content: [{ type: 'resource', resource: { uri, mimeType: c.mimeType, blob: c.blob! } }] };
    } catch (err) {
      return toolError(err, deps.log);
    }
  },
});
