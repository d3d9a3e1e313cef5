import type { CallToolResult } from '@modelcontextprotocol/server';
import * as z from 'zod';
import type { Skill } from '../skills/types.js';
import type { ServerDeps } from './server-deps.js';
import { skillInstructions } from './skill-instructions.js';
import { skillUri } from './skill-uri.js';
import { deepFreeze } from './deep-freeze.js';
import { rememberResultJson } from './result-json.js';

/**
 * What programs get in `structuredContent`: the skill's metadata and file index. The instructions are in the text
 * only (a model is handed them once); a program reads any file, SKILL.md included, through its `uri`.
 */
export const SkillViewSchema = z.object({
  name: z.string().describe('Skill name.'),
  kind: z
    .enum(['instruction', 'executable'])
    .describe('instruction: follow the text; executable: called like a function.'),
  description: z.string().describe('What the skill does and when to use it.'),
  entryPoint: z
    .string()
    .optional()
    .describe('Entry point of an executable skill, relative to the skill folder.'),
  files: z
    .array(
      z.object({
        path: z.string().describe('Path relative to the skill folder.'),
        size: z.number().describe('Size in bytes.'),
        uri: z.string().describe('skill:// URI: read it with resources/read.'),
      }),
    )
    .describe('Files of the skill; read them with read_skill_file or resources/read.'),
});
export type SkillView = z.infer<typeof SkillViewSchema>;

const kb = (n: number) => (n < 1024 ? `${n} B` : `${(n / 1024).toFixed(1)} KB`);

/** Built once per skill object (a reload that changes a skill makes a new one) and answer form; frozen, shared. */
const built = new WeakMap<Skill, Map<boolean, CallToolResult>>();

/**
 * A skill's instructions and file index, as a tool result the model can act on: one text block (the SKILL.md body,
 * then a compact file index) and the metadata in `structuredContent`. Every call of the same skill gets the same
 * content (a fresh top-level object around it), built on the first from the skill file (see
 * {@link skillInstructions}: a skill whose file changed since it was loaded is reloaded first); its JSON is made then
 * too, and the stdio transport writes it as it is (`rememberResultJson`). Throws what `skillInstructions` throws.
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

/** The text a model reads: the body, then one line per file and, when there are scripts, how to run them. */
export function skillViewText(skill: Skill, body: string, opts: { canRunScripts: boolean }): string {
  const lines = [body.trim(), '', `## Files of ${skill.name}`, ''];
  lines.push(...skill.files.map((f) => `- ${f.path} (${kb(f.size)})`));
  lines.push('', `Read one with read_skill_file {"skill": "${skill.name}", "path": "<path>"}.`);
  if (skill.entryPoint !== undefined) lines.push(`Entry point: ${skill.entryPoint}.`);
  if (skill.files.some((f) => f.path.startsWith('scripts/'))) {
    lines.push(
      opts.canRunScripts
        ? `Run a script with run_skill_script {"skill": "${skill.name}", "script": "<path>", "args": [...]}; it is sandboxed and may need the user's approval.`
        : 'This server does not run scripts: show the user the commands instead.',
    );
  }
  return lines.join('\n');
}

function buildView(skill: Skill, body: string, opts: { canRunScripts: boolean }): CallToolResult {
  const view: SkillView = {
    name: skill.name,
    kind: skill.kind,
    description: skill.description,
    ...(skill.entryPoint === undefined ? {} : { entryPoint: skill.entryPoint }),
    files: skill.files.map((f) => ({ path: f.path, size: f.size, uri: skillUri(skill.name, f.path) })),
  };
  return { content: [{ type: 'text', text: skillViewText(skill, body, opts) }], structuredContent: view };
}
