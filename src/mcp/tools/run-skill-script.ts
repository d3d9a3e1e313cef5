import * as z from 'zod';
import { SkillsError } from '../../errors.js';
import { runScopeChallenge } from '../auth-info.js';
import { gatedCall, type GateBridge } from '../gated-call.js';
import { findSkill } from '../read-skill-content.js';
import type { ServerDeps } from '../server-deps.js';
import type { Runner } from '../../runner/runner-types.js';
import type { SessionInfo } from '../../runner/session.js';
import { toolError } from '../tool-error.js';
import type { ToolDef } from './tool-def.js';
import { memoJsonSchema } from '../memo-json-schema.js';

const input = z.object({
  skill: z.string().min(1).max(200).describe('Skill name.'),
  script: z
    .string()
    .min(1)
    .max(1000)
    .optional()
    .describe('Script path relative to the skill folder, e.g. "scripts/toc.py". Give this or "module".'),
  module: z
    .string()
    .min(1)
    .max(200)
    .optional()
    .describe(
      'A Python module of the skill, run as `python3 -m <module>` from the skill root, e.g. "scripts.package_skill".',
    ),
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
): ToolDef<z.infer<typeof input>> => ({
  name: 'run_skill_script',
  config: {
    title: 'Run a skill script',
    description:
      'Run a script of a skill (python3, node or bash by extension), or a Python module of it ("module", as in ' +
      '`python -m scripts.tool`), in a sandbox with no network by default. The skill root is on the Python module ' +
      'path. The working folder is a new, empty output folder for this call: files the script writes there (e.g. ' +
      'a relative output path) come back as files in the result. ' +
      (deps.config.runs.session_folder.enabled
        ? "Files a script keeps in $SKILL_SESSION_DIR stay there for this session's next runs (unpack, edit, " +
          'pack across calls) and are listed as skill-session:// resources. '
        : '') +
      'Pass arguments as a list and optional JSON input. The user may be asked to approve the run.',
    inputSchema: memoJsonSchema(input),
    annotations: { readOnlyHint: false, destructiveHint: false, openWorldHint: false },
    scopeChallenge: runScopeChallenge(deps.config),
  },
  handler: async ({ skill, script, module, args, input: data }, ctx) => {
    try {
      const s = findSkill(deps.catalog(), skill);
      if ((script === undefined) === (module === undefined)) {
        throw new SkillsError('INPUT_INVALID', 'give exactly one of "script" or "module"', {
          hint: 'e.g. {"skill": "pdf", "script": "scripts/toc.py"} or {"skill": "pdf", "module": "scripts.toc"}.',
        });
      }
      const req = {
        tool: 'run_skill_script',
        session,
        skill: s,
        ...(script === undefined ? {} : { script }),
        ...(module === undefined ? {} : { module }),
        ...(args === undefined ? {} : { args }),
        input: data,
      };
      return await gatedCall(deps, bridge, req, ctx);
    } catch (err) {
      return toolError(err, deps.log);
    }
  },
});
