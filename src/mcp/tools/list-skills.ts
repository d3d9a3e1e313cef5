import * as z from 'zod';
import type { ServerDeps } from '../server-deps.js';
import { READ_ONLY, type ToolDef } from './tool-def.js';
import { memoJsonSchema } from '../memo-json-schema.js';

const input = z.object({});
const output = z.object({
  skills: z.array(
    z.object({
      name: z.string().describe('Skill name; pass it to load_skill.'),
      kind: z.enum(['instruction', 'executable']),
      description: z.string(),
    }),
  ),
});

export const listSkillsTool = (deps: ServerDeps): ToolDef<z.infer<typeof input>> => ({
  name: 'list_skills',
  config: {
    title: 'List skills',
    description: 'List the available skills with what each does and when to use it. Then call load_skill.',
    inputSchema: memoJsonSchema(input),
    outputSchema: memoJsonSchema(output),
    annotations: READ_ONLY,
  },
  handler: () => {
    const skills = deps
      .catalog()
      .skills.map((s) => ({ name: s.name, kind: s.kind, description: s.description }));
    const text = skills.map((s) => `- ${s.name} (${s.kind}): ${s.description}`).join('\n') || '(no skills)';
    return { content: [{ type: 'text', text }], structuredContent: { skills } };
  },
});
