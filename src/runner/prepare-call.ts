import type { Config } from '../config/config-schema.js';
import { SkillsError } from '../errors.js';
import {
  assessRisk,
  bindSkillCall,
  decide,
  effectiveRequests,
  type EffectiveRequests,
  type BoundSkillCall,
  type PolicyDecision,
  type Risk,
  type ScriptScan,
  type SkillPins,
} from '../gate/index.js';
import type { EnvResolver, InstallPlan, SkillEnv } from '../envs/create-env-resolver.js';
import { interpreterForScript } from '../sandbox/resolve-interpreter.js';
import { hashBundle, type Bundle } from '../skills/bundle-hash.js';
import { isInside } from '../skills/list-skill-files.js';
import { checkRelativePath } from '../skills/resolve-skill-path.js';
import type { Skill } from '../skills/types.js';
import { buildArgparseArgv } from './build-argv.js';
import { checkedArgs } from './argv-limits.js';
import { realScript, type RealScript } from './real-script.js';
import { refusePythonStartupHooks } from './python-startup-hooks.js';
import { requestDigest } from './request-digest.js';
import { resolveModule } from './resolve-module.js';
import type { EntryInput } from './entry-input.js';
import type { Profile } from '../sandbox/profile-schema.js';
import { callNetwork, callProfile } from './call-profile.js';
import type { CallRequest } from './call-request.js';

export interface PreparedCall {
  req: CallRequest;
  skill: Skill;
  /**
   * The real file that runs, relative to the skill folder: a link inside the skill is followed to the file it names;
   * for a module, the file Python runs for it.
   */
  script: string;
  /** Set when the call runs `python3 -m <module>` from the skill root. */
  module?: string;
  /** realpath of the script, inside the skill folder. */
  scriptAbs: string;
  /** `python3`, `node` or `bash`. */
  interpreter: string;
  /** The program that runs it: the interpreter, or for Python the operator's `dependencies.python` when set. */
  program: string;
  /** Arguments after the script. */
  args: string[];
  input: unknown;
  bundle: Bundle;
  bound: BoundSkillCall;
  /** What the request asked for, bound ({@link requestDigest}): a retry runs the call only when its own is equal. */
  requestSha256: string;
  risk: Risk;
  policy: PolicyDecision;
  /** The network the run gets ({@link callNetwork}): what the form shows and the sandbox is given. */
  network: 'none' | 'full';
  /** The sandbox profile the run gets ({@link callProfile}), resolved before the guard and the form. */
  profile: Profile;
  /** What the call runs with: the frontmatter's asks with the operator's `skill_overrides` in their place. */
  grants: EffectiveRequests;
  /** The skill's environment, when it declares packages. */
  env?: SkillEnv;
  /** What an approval also allows when the environment is not built yet. */
  installPlan?: InstallPlan;
}

export interface PrepareDeps {
  config: Config;
  /** The folder each skill name first stood for: allow rules and grants follow the folder, not the name. */
  pins: SkillPins;
  entryInput: (skill: Skill) => EntryInput;
  scan: (skill: Skill, bundleSha256: string) => Promise<ScriptScan>;
  envs?: EnvResolver;
  /** Loads a sandbox profile (cached by the runner). */
  profile: (name: string) => Promise<Profile>;
}

/** Steps 1–3 of a gated call (docs/architecture.md): resolve the script, bind content and input, assess risk, apply policy. */
export async function prepareCall(req: CallRequest, deps: PrepareDeps): Promise<PreparedCall> {
  const { skill } = req;
  if (req.module !== undefined && req.script !== undefined) {
    throw new SkillsError('INPUT_INVALID', 'give either "script" or "module", not both', {
      hint: 'Use "module" for `python -m pkg.mod` instructions, "script" for a file path.',
    });
  }
  // Arguments first: every expansion is bounded before any file is read or hashed.
  const entry = req.script === undefined && req.module === undefined ? deps.entryInput(skill) : undefined;
  const args =
    entry?.argparse !== undefined
      ? buildArgparseArgv(entry.argparse, (req.input ?? {}) as Record<string, unknown>)
      : checkedArgs(req.args ?? []);
  const requested =
    req.module !== undefined
      ? undefined
      : req.script === undefined
        ? skill.entryPoint
        : checkRelativePath(req.script);
  if (req.module === undefined && requested === undefined) {
    throw new SkillsError('SCRIPT_NOT_FOUND', `skill "${skill.name}" has no entry point`, {
      hint: `Run one of its scripts with run_skill_script: ${scriptsOf(skill) || '(it has none)'}.`,
    });
  }
  // Runs execute from a copy holding exactly the hashed files: the module is looked up, and the script's real
  // file checked, among those.
  const bundle = hashBundle(skill.dir);
  // A git source's skill runs only while its checkout is still the pinned commit (the approval names that commit).
  const changed = deps.config.git_roots?.find((r) => isInside(r.root, skill.dir))?.verify?.();
  if (changed !== undefined)
    throw new SkillsError(
      'SOURCE_INVALID',
      `skill "${skill.name}": its git source's checkout changed since the start: ${changed}`,
      {
        hint: 'Run `skills-mcp sources update`, then restart the server.',
      },
    );
  const path =
    req.module !== undefined
      ? resolveModule(
          bundle.entries.map((e) => e.path),
          skill.name,
          req.module,
        )
      : requested!;
  let real: RealScript;
  try {
    real = realScript(skill.dir, skill.name, bundle, path);
  } catch (e) {
    if (e instanceof SkillsError && e.code === 'FILE_NOT_FOUND') {
      throw new SkillsError('SCRIPT_NOT_FOUND', `skill "${skill.name}" has no script "${path}"`, {
        hint: `Its scripts: ${scriptsOf(skill) || '(none)'}.`,
      });
    }
    throw e;
  }
  const { script, scriptAbs, aliases } = real;
  // The runner follows the name the call used (a link `tool.py` to an extension-less file runs with python3).
  const interpreter = interpreterForScript(path);
  if (interpreter === undefined) {
    throw new SkillsError('RUNNER_UNSUPPORTED', `no runner for "${path}"`, {
      hint: 'Scripts run by extension: .py with python3, .js/.mjs/.cjs with node, .sh/.bash with bash.',
    });
  }
  if (interpreter === 'python3')
    refusePythonStartupHooks(
      bundle.entries.map((e) => e.path),
      skill.name,
    );
  const env = await deps.envs?.forSkill(skill);
  if (env !== undefined && !env.ready && deps.config.dependencies.install === 'never') {
    throw new SkillsError('ENV_MISSING', `the environment of skill "${skill.name}" is not installed`, {
      hint: `Installs at call time are off (dependencies.install: never). The operator can run: skills-mcp deps install ${skill.name}`,
    });
  }
  const installPlan = env === undefined || env.ready ? undefined : await deps.envs?.plan(env);
  const grants = effectiveRequests(skill.requests, deps.config.skill_overrides[skill.name]);
  const profile = await callProfile(grants, deps.config, deps.profile);
  const network = callNetwork(grants, profile);
  const bound = bindSkillCall(
    {
      skill: skill.name,
      folder: skill.dir,
      script,
      ...(req.module === undefined ? {} : { module: req.module }),
      bundleSha256: bundle.sha256,
      ...(env === undefined ? {} : { envSha256: env.id }),
      operator: grants.operator,
      profileGrants: {
        ...(network === 'full' && !grants.requests.network ? { network: 'full' } : {}),
        ...(profile.sandbox === 'off' ? { sandbox: 'off' } : {}),
      },
      input: req.input,
      args,
    },
    deps.config.approval.granularity,
  );
  // Bound like the input above: a request the key could bind has a digest.
  const requestSha256 = requestDigest(req);
  if (requestSha256 === undefined)
    throw new SkillsError('KEY_INVALID', `the request for skill "${skill.name}" cannot be bound`);
  const scan = await deps.scan(skill, bundle.sha256);
  const risk = assessRisk({
    skill: grants,
    scan,
    sandbox: deps.config.sandbox.mode,
    workspace: deps.config.workspace !== undefined,
    profile: { name: profile.name, network: profile.network, sandbox: profile.sandbox },
  });
  const firstFolder = deps.pins.folderOf(skill.name);
  const policy = decide({
    skill: skill.name,
    script,
    aliases,
    ...(firstFolder === undefined || firstFolder === skill.dir ? {} : { firstFolder }),
    risk,
    ...(req.session.caller === undefined ? {} : { caller: req.session.caller }),
    config: deps.config.approval,
  });
  return {
    req,
    skill,
    script,
    ...(req.module === undefined ? {} : { module: req.module }),
    scriptAbs,
    interpreter,
    program: interpreter === 'python3' && deps.envs !== undefined ? deps.envs.python(skill) : interpreter,
    args,
    input: req.input,
    bundle,
    bound,
    requestSha256,
    risk,
    policy,
    network,
    profile,
    grants,
    ...(env === undefined ? {} : { env }),
    ...(installPlan === undefined ? {} : { installPlan }),
  };
}

const scriptsOf = (skill: Skill): string =>
  skill.files
    .filter((f) => f.path.startsWith('scripts/') || interpreterForScript(f.path) !== undefined)
    .map((f) => f.path)
    .filter((p) => interpreterForScript(p) !== undefined)
    .join(', ');
