import type { CallToolResult } from '@modelcontextprotocol/server';
import * as z from 'zod';
import type { Skill } from '../skills/types.js';
import type { ServerDeps } from './server-deps.js';
import { skillInstructions } from './skill-instructions.js';
import { mimeTypeOf, skillUri } from './skill-uri.js';
import { deepFreeze } from './deep-freeze.js';
import { rememberResultJson } from './result-json.js';

export const SkillViewSchema = z.object({
  name: z.string().describe('Skill name.'),
  kind: z
    .enum(['instruction', 'executable'])
    .describe('instruction: follow the text; executable: called like a function.'),
  description: z.string().describe('What the skill does and when to use it.'),
  instructions: z.string().describe('The SKILL.md body.'),
  entryPoint: z
    .string()
    .optional()
    .describe('Entry point of an executable skill, relative to the skill folder.'),
  files: z
    .array(z.object({ path: z.string(), size: z.number(), uri: z.string() }))
    .describe('Files of the skill; read them with read_skill_file or resources/read.'),
});
export type SkillView = z.infer<typeof SkillViewSchema>;

const kb = (n: number) => (n < 1024 ? `${n} B` : `${(n / 1024).toFixed(1)} KB`);

/** Built once per skill object (a reload that changes a skill makes a new one) and answer form; frozen, shared. */
const built = new WeakMap<Skill, Map<boolean, CallToolResult>>();

/**
 * A skill's instructions and file index, as a tool result the model can act on. Every call of the same skill gets
 * the same content (a fresh top-level object around it), built on the first from the skill file (see
 * {@link skillInstructions}: a skill whose file changed since it was loaded is reloaded first); its JSON is made
 * then too, and the stdio transport writes it as it is (`rememberResultJson`). Throws what `skillInstructions`
 * throws.
 */
export function skillView(deps: ServerDeps, skill: Skill, opts: { canRunScripts: boolean }): CallToolResult {
  const view = built.get(skill)?.get(opts.canRunScripts);
  if (view !== undefined) return { ...view };
  const { skill: current, body } = skillInstructions(deps, skill);
  let forSkill = built.get(current);
  if (forSkill === undefined) built.set(current, (forSkill = new Map<boolean, CallToolResult>()));
  const made = deepFreeze(buildView(current, body, opts));
  forSkill.set(opts.canRunScripts, made);
  rememberResultJson(made);
  return { ...made };
}

function buildView(skill: Skill, body: string, opts: { canRunScripts: boolean }): CallToolResult {
  const files = skill.files.map((f) => ({ path: f.path, size: f.size, uri: skillUri(skill.name, f.path) }));
  const scripts = skill.files.filter((f) => f.path.startsWith('scripts/')).map((f) => f.path);
  const lines = [
    `# ${skill.name} (${skill.kind} skill)`,
    '',
    skill.description,
    '',
    '## Instructions',
    '',
    body.trim(),
    '',
  ];
  lines.push('## Files', '', `Read one with read_skill_file {"skill": "${skill.name}", "path": "<path>"}.`);
  for (const f of files) lines.push(`- ${f.path} (${kb(f.size)})`);
  if (skill.entryPoint !== undefined) lines.push('', `Entry point: ${skill.entryPoint}.`);
  if (scripts.length > 0) {
    lines.push(
      '',
      opts.canRunScripts
        ? `Run a script with run_skill_script {"skill": "${skill.name}", "script": "<path>", "args": [...]}; it is sandboxed and may need the user's approval.`
        : 'This server does not run scripts: show the user the commands instead.',
    );
  }
  const view: SkillView = {
    name: skill.name,
    kind: skill.kind,
    description: skill.description,
    instructions: body,
    files,
    ...(skill.entryPoint === undefined ? {} : { entryPoint: skill.entryPoint }),
  };
  return {
    content: [
      { type: 'text', text: lines.join('\n') },
      ...files.map((f) => ({
        type: 'resource_link' as const,
        uri: f.uri,
        name: f.path,
        mimeType: mimeTypeOf(f.path),
        size: f.size,
      })),
    ],
    structuredContent: view,
  };
}
