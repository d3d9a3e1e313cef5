import * as z from 'zod';
import { gatedCall, type GateBridge } from '../gated-call.js';
import { findSkill } from '../read-skill-content.js';
import type { ServerDeps } from '../server-deps.js';
import type { Runner } from '../../runner/runner-types.js';
import type { SessionInfo } from '../../runner/session.js';
import { toolError } from '../tool-error.js';
import type { ToolDef } from './tool-def.js';

const input = z.object({
  skill: z.string().min(1).max(200).describe('Skill name.'),
  script: z
    .string()
    .min(1)
    .max(1000)
    .describe('Script path relative to the skill folder, e.g. "scripts/toc.py".'),
  args: z
    .array(z.string().max(4096))
    .max(100)
    .optional()
    .describe('Command-line arguments, one per item (never a shell string).'),
  input: z.unknown().optional().describe('JSON given to the script on stdin and in $SKILL_INPUT_FILE.'),
});

/** Runs any script of a skill: sandboxed, gated by policy and (where needed) the user's approval. */
export const runSkillScriptTool = (
  deps: ServerDeps & { runner: Runner },
  session: SessionInfo,
  bridge: GateBridge,
  read: (abs: string) => Buffer,
): ToolDef<z.infer<typeof input>> => ({
  name: 'run_skill_script',
  config: {
    title: 'Run a skill script',
    description:
      'Run a script of a skill (python3, node or bash by extension) in a sandbox with no network by default. ' +
      'Pass arguments as a list and optional JSON input. The user may be asked to approve the run; the result has ' +
      'the output and links to any files the script wrote.',
    inputSchema: input,
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
  },
  handler: async ({ skill, script, args, input: data }, ctx) => {
    try {
      const s = findSkill(deps.catalog(), skill);
      const req = {
        tool: 'run_skill_script',
        session,
        skill: s,
        script,
        ...(args === undefined ? {} : { args }),
        input: data,
      };
      return await gatedCall(deps, bridge, req, ctx, read);
    } catch (err) {
      return toolError(err, deps.log);
    }
  },
});
