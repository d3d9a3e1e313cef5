import { createHash } from 'node:crypto';
import type { DependenciesConfig } from '../config/dependencies-schema.js';
import type { Logger } from '../log.js';
import { forbiddenMounts, readOnlyPathProblem } from '../sandbox/check-read-only-path.js';
import type { Sandbox } from '../sandbox/create-sandbox.js';
import type { Skill } from '../skills/types.js';
import { envId } from './env-id.js';
import { isEmptySpec, readEnvSpec, type EnvSpec } from './env-spec.js';
import { envDir, readManifest, type EnvManifest } from './env-store.js';
import { hostRuntime, type HostRuntime } from './host-runtime.js';
import { installCommands, installEnv } from './install-env.js';
import { readNpmRegistry } from './npm-registry.js';
import { hostSatisfies, type HostRequirement } from './host-satisfies.js';
import { readPipSettings, redactUrl, type PipSettings } from './pip-config.js';
import { pythonCommand } from './python-command.js';
import { pythonPath } from './python-path.js';

/** How long the interpreter's answer on its own packages is reused. */
const HOST_CHECK_MS = 60_000;

/** A skill's environment: what it holds, where it lives, whether it is built. */
export interface SkillEnv {
  /** sha256 identity (spec + interpreter version + platform). */
  id: string;
  spec: EnvSpec;
  /** `<envs>/<id>`: exists only once complete. */
  dir: string;
  ready: boolean;
}

/** What an install will do, for the approval form and `skills-mcp deps install`. */
export interface InstallPlan {
  commands: string[];
  /** Where packages come from (credentials removed). */
  sources: string[];
  binaryOnly: boolean;
}

/** How a skill's declared packages are provided. */
export type Provision =
  | { kind: 'none' }
  | { kind: 'env'; env: SkillEnv }
  /** `dependencies.use_host_packages`: the interpreter's own packages satisfy every requirement. */
  | { kind: 'host'; python: string; packages: HostRequirement[] };

export interface EnvResolver {
  readonly envsDir: string;
  /**
   * The skill's environment, or undefined when it declares no packages or runs on the interpreter's own packages
   * (`use_host_packages`). Throws ENV_SPEC_INVALID.
   */
  forSkill(skill: Skill): Promise<SkillEnv | undefined>;
  /** How the skill's packages are provided: a built (or missing) environment, the host's packages, or none. */
  provision(skill: Skill): Promise<Provision>;
  /** The Python that builds the skill's environment and runs its scripts (see `pythonCommand`). */
  python(skill: Skill): string;
  /** The folders `python` imports packages from (its `sys.path`, isolated): for naming installed versions. */
  sitePackages(skill: Skill): Promise<string[]>;
  plan(env: SkillEnv): Promise<InstallPlan>;
  install(env: SkillEnv, skill: Skill, sandbox: Sandbox): Promise<EnvManifest>;
}

export interface EnvResolverOptions {
  config: DependenciesConfig;
  envsDir: string;
  /** The server's environment (PATH, PIP_* settings). */
  env: NodeJS.ProcessEnv;
  log: Logger;
  /**
   * The server's own files and folders (audit log, anchor key and file, console links): the folder a local index's
   * links resolve into is never mounted into the install sandbox when it is, lies below or holds one of them.
   */
  protect?: readonly string[];
  /** Server identity: a root server owns sealed environments. */
  uid?: number;
  gid?: number;
}

const sha256 = (s: string) => createHash('sha256').update(s).digest('hex');

/**
 * Where each Node package comes from, as the install enforces it: vendored ones are copied from the skill (by path
 * and content hash), everything else, a lock's entries included, only from the operator's registry.
 */
function nodeSources(spec: EnvSpec): string[] {
  const vendored = Object.entries(spec.node).filter(([, v]) => v.startsWith('file:'));
  return [
    ...vendored.map(
      ([k, v]) => `${k}: copied from the skill (${v}, sha256 ${(spec.nodeFiles?.[v] ?? '?').slice(0, 12)})`,
    ),
    ...(spec.nodeRegistry !== undefined
      ? [
          `npm registry ${redactUrl(spec.nodeRegistry)}${spec.nodeLock === undefined ? '' : ' (every package-lock.json entry resolves there)'}`,
        ]
      : []),
  ];
}

/** Skill environments under `envsDir`: identity, install plans, installs. Interpreter and pip answers are cached. */
export function createEnvResolver(o: EnvResolverOptions): EnvResolver {
  const runtimes = new Map<string, Promise<HostRuntime>>();
  let pip: Promise<PipSettings> | undefined;
  let registry: Promise<string> | undefined;
  const installing = new Map<string, Promise<EnvManifest>>();
  const runtime = (need: { python: boolean; node: boolean }, python: string) => {
    const k = `${need.python}:${need.node}:${python}`;
    let r = runtimes.get(k);
    if (r === undefined) {
      r = hostRuntime(o.env, need, python);
      runtimes.set(k, r);
      r.catch(() => runtimes.delete(k));
    }
    return r;
  };
  const forbidden = forbiddenMounts({
    ...(o.env.HOME === undefined ? {} : { home: o.env.HOME }),
    serverPaths: [o.envsDir, ...(o.protect ?? [])],
  });
  const pythonOf = (_skill: Skill) => pythonCommand(o.config);
  // The operator's pip settings, as the default interpreter's pip reports them.
  const pipSettings = () =>
    (pip ??= readPipSettings(o.env, (p) => readOnlyPathProblem(p, forbidden), pythonCommand(o.config)));
  const sites = new Map<string, Promise<string[]>>();
  const hostChecks = new Map<string, { at: number; result: Promise<HostRequirement[]> }>();
  /** The interpreter's answer for one spec, reused for a minute (an operator may install packages meanwhile). */
  const hostCheck = (python: string, reqs: readonly string[]) => {
    const k = `${python}\0${reqs.join('\0')}`;
    const hit = hostChecks.get(k);
    if (hit !== undefined && Date.now() - hit.at < HOST_CHECK_MS) return hit.result;
    const result = hostSatisfies(python, reqs, o.env);
    if (hostChecks.size >= 1000) hostChecks.clear();
    hostChecks.set(k, { at: Date.now(), result });
    return result;
  };
  const npmRegistry = () => {
    if (registry === undefined) {
      registry = readNpmRegistry(o.env);
      registry.catch(() => (registry = undefined));
    }
    return registry;
  };
  const declaresNode = (skill: Skill) =>
    skill.files.some((f) => f.path === 'package.json') ||
    (o.config.skills[skill.name]?.node ?? []).length > 0;
  const uid = o.uid ?? process.getuid?.() ?? 0;
  const gid = o.gid ?? process.getgid?.() ?? 0;

  const provision = async (skill: Skill): Promise<Provision> => {
    const reg = declaresNode(skill) ? await npmRegistry() : undefined;
    const spec = readEnvSpec(skill.dir, skill.files, o.config.skills[skill.name], sha256, reg);
    if (isEmptySpec(spec)) return { kind: 'none' };
    const python = pythonOf(skill);
    if (o.config.use_host_packages && spec.python.length > 0 && Object.keys(spec.node).length === 0) {
      const packages = await hostCheck(python, spec.python);
      if (packages.every((p) => p.ok)) return { kind: 'host', python, packages };
    }
    const rt = await runtime(
      { python: spec.python.length > 0, node: Object.keys(spec.node).length > 0 },
      python,
    );
    const id = envId(spec, rt, o.config.allow_source);
    return {
      kind: 'env',
      env: { id, spec, dir: envDir(o.envsDir, id), ready: readManifest(o.envsDir, id) !== undefined },
    };
  };

  return {
    envsDir: o.envsDir,
    provision,
    async forSkill(skill) {
      const p = await provision(skill);
      return p.kind === 'env' ? p.env : undefined;
    },
    python: pythonOf,
    sitePackages(skill) {
      const python = pythonOf(skill);
      let p = sites.get(python);
      if (p === undefined) {
        p = pythonPath(python, o.env);
        sites.set(python, p);
      }
      return p;
    },
    async plan(env) {
      const p = await pipSettings();
      return {
        commands: installCommands(env.spec, o.config.allow_source),
        sources: [...(env.spec.python.length > 0 ? p.sources : []), ...nodeSources(env.spec)],
        binaryOnly: !o.config.allow_source,
      };
    },
    async install(env, skill, sandbox) {
      let p = installing.get(env.id);
      if (p === undefined) {
        p = (async () =>
          installEnv(env.id, env.spec, {
            sandbox,
            profile: await sandbox.loadProfile('install'),
            pip: await pipSettings(),
            python: pythonOf(skill),
            npmRegistry: await npmRegistry(),
            allowSource: o.config.allow_source,
            maxBytes: o.config.max_size_mib * 1024 * 1024,
            timeoutMs: o.config.timeout_seconds * 1000,
            envsDir: o.envsDir,
            log: o.log,
            skillDir: skill.dir,
            ...(uid === 0 ? { owner: { uid, gid } } : {}),
          }))();
        installing.set(env.id, p);
        void p.finally(() => installing.delete(env.id)).catch(() => undefined);
      }
      return p;
    },
  };
}
