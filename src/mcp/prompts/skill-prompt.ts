import { escapeForDisplay } from '../../escape-for-display.js';
import type { GetPromptResult, Prompt } from '@modelcontextprotocol/server';
import * as z from 'zod';
import type { Skill } from '../../skills/types.js';
import type { ServerDeps } from '../server-deps.js';
import { skillInstructions } from '../skill-instructions.js';

export const PromptArgsSchema = z.object({
  request: z.string().max(100_000).optional().describe('What you want done with this skill (optional).'),
});

/** The prompt's arguments as prompts/list shows them (what the SDK derives from {@link PromptArgsSchema}). */
const PROMPT_ARGUMENTS = [
  { name: 'request', description: PromptArgsSchema.shape.request.description, required: false },
];

/** One prompt per skill, as prompts/list shows it: a slash command named after the skill's tool. */
export const skillPromptEntry = (skill: Skill): Prompt => ({
  name: skill.toolName,
  title: escapeForDisplay(skill.name),
  description: skill.description.length > 1024 ? `${skill.description.slice(0, 1023)}…` : skill.description,
  arguments: PROMPT_ARGUMENTS,
});

/**
 * The prompt itself: a user message with the skill's current instructions and the request. Throws what
 * {@link skillInstructions} throws.
 */
export function skillPromptMessages(
  deps: ServerDeps,
  skill: Skill,
  { request }: z.infer<typeof PromptArgsSchema>,
): GetPromptResult {
  const { skill: current, body } = skillInstructions(deps, deps.catalog().get(skill.name) ?? skill);
  const parts = [`Use the "${current.name}" skill. Its instructions follow.`, '', body.trim()];
  if (current.files.length > 1) {
    parts.push(
      '',
      `Its files can be read with read_skill_file {"skill": "${current.name}", "path": …}: ${current.files.map((f) => f.path).join(', ')}.`,
    );
  }
  if (request !== undefined && request.trim() !== '') parts.push('', '---', '', `Request: ${request}`);
  return {
    description: current.description,
    messages: [{ role: 'user', content: { type: 'text', text: parts.join('\n') } }],
  };
}
