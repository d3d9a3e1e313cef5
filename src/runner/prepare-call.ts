import type { Config } from '../config/config-schema.js';
import { SkillsError } from '../errors.js';
import {
  assessRisk,
  bindSkillCall,
  decide,
  type BoundSkillCall,
  type PolicyDecision,
  type Risk,
  type ScriptScan,
} from '../gate/index.js';
import { interpreterForScript } from '../sandbox/resolve-interpreter.js';
import { hashBundle, type Bundle } from '../skills/bundle-hash.js';
import { checkRelativePath, resolveSkillPath } from '../skills/resolve-skill-path.js';
import type { Skill } from '../skills/types.js';
import { buildArgparseArgv } from './build-argv.js';
import type { EntryInput } from './entry-input.js';
import type { SessionInfo } from './session.js';

/** A gated call as the MCP layer hands it over: already resolved to a skill, input already schema-checked. */
export interface CallRequest {
  /** MCP tool name (`<skill>` or `run_skill_script`). */
  tool: string;
  session: SessionInfo;
  skill: Skill;
  /** Script relative to the skill folder; undefined = the entry point. */
  script?: string;
  /** Extra argv for `run_skill_script` (never a shell string). */
  args?: readonly string[];
  /** JSON input, given to the script on stdin. */
  input?: unknown;
}

export interface PreparedCall {
  req: CallRequest;
  skill: Skill;
  /** Script path relative to the skill folder. */
  script: string;
  /** realpath of the script, inside the skill folder. */
  scriptAbs: string;
  /** `python3`, `node` or `bash`. */
  interpreter: string;
  /** Arguments after the script. */
  args: string[];
  input: unknown;
  bundle: Bundle;
  bound: BoundSkillCall;
  risk: Risk;
  policy: PolicyDecision;
  network: 'none' | 'full';
}

export interface PrepareDeps {
  config: Config;
  entryInput: (skill: Skill) => EntryInput;
  scan: (skill: Skill, bundleSha256: string) => Promise<ScriptScan>;
}

/** Stages 1–3 of DESIGN §6: resolve the script, bind content and input, assess risk, apply policy. */
export async function prepareCall(req: CallRequest, deps: PrepareDeps): Promise<PreparedCall> {
  const { skill } = req;
  const script = req.script === undefined ? skill.entryPoint : checkRelativePath(req.script);
  if (script === undefined) {
    throw new SkillsError('SCRIPT_NOT_FOUND', `skill "${skill.name}" has no entry point`, {
      hint: `Run one of its scripts with run_skill_script: ${scriptsOf(skill) || '(it has none)'}.`,
    });
  }
  let scriptAbs: string;
  try {
    scriptAbs = resolveSkillPath(skill.dir, script, skill.name);
  } catch (e) {
    if (e instanceof SkillsError && e.code === 'FILE_NOT_FOUND') {
      throw new SkillsError('SCRIPT_NOT_FOUND', `skill "${skill.name}" has no script "${script}"`, {
        hint: `Its scripts: ${scriptsOf(skill) || '(none)'}.`,
      });
    }
    throw e;
  }
  const interpreter = interpreterForScript(script);
  if (interpreter === undefined) {
    throw new SkillsError('RUNNER_UNSUPPORTED', `no runner for "${script}"`, {
      hint: 'Scripts run by extension: .py with python3, .js/.mjs/.cjs with node, .sh/.bash with bash.',
    });
  }
  const entry = req.script === undefined ? deps.entryInput(skill) : undefined;
  const args =
    entry?.argparse !== undefined
      ? buildArgparseArgv(entry.argparse, (req.input ?? {}) as Record<string, unknown>)
      : [...(req.args ?? [])];
  const bundle = hashBundle(skill.dir);
  const bound = bindSkillCall(
    { skill: skill.name, script, bundleSha256: bundle.sha256, input: req.input, args },
    deps.config.approval.granularity,
  );
  const scan = await deps.scan(skill, bundle.sha256);
  const risk = assessRisk({ skill, scan, sandbox: deps.config.sandbox.mode });
  const policy = decide({ skill: skill.name, script, risk, config: deps.config.approval });
  const network = skill.requests.network ? 'full' : 'none';
  return {
    req,
    skill,
    script,
    scriptAbs,
    interpreter,
    args,
    input: req.input,
    bundle,
    bound,
    risk,
    policy,
    network,
  };
}

const scriptsOf = (skill: Skill): string =>
  skill.files
    .filter((f) => f.path.startsWith('scripts/') || interpreterForScript(f.path) !== undefined)
    .map((f) => f.path)
    .filter((p) => interpreterForScript(p) !== undefined)
    .join(', ');
