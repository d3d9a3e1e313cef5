import { createHash } from 'node:crypto';
import type { DependenciesConfig } from '../config/dependencies-schema.js';
import type { Logger } from '../log.js';
import type { Sandbox } from '../sandbox/create-sandbox.js';
import type { Skill } from '../skills/types.js';
import { envId } from './env-id.js';
import { isEmptySpec, readEnvSpec, type EnvSpec } from './env-spec.js';
import { envDir, readManifest, type EnvManifest } from './env-store.js';
import { hostRuntime, type HostRuntime } from './host-runtime.js';
import { installCommands, installEnv } from './install-env.js';
import { readNpmRegistry } from './npm-registry.js';
import { readPipSettings, redactUrl, type PipSettings } from './pip-config.js';

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

export interface EnvResolver {
  readonly envsDir: string;
  /** The skill's environment, or undefined when it declares no packages. Throws ENV_SPEC_INVALID. */
  forSkill(skill: Skill): Promise<SkillEnv | undefined>;
  plan(env: SkillEnv): Promise<InstallPlan>;
  install(env: SkillEnv, skill: Skill, sandbox: Sandbox): Promise<EnvManifest>;
}

export interface EnvResolverOptions {
  config: DependenciesConfig;
  envsDir: string;
  /** The server's environment (PATH, PIP_* settings). */
  env: NodeJS.ProcessEnv;
  log: Logger;
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
  const runtime = (need: { python: boolean; node: boolean }) => {
    const k = `${need.python}:${need.node}`;
    let r = runtimes.get(k);
    if (r === undefined) {
      r = hostRuntime(o.env, need);
      runtimes.set(k, r);
      r.catch(() => runtimes.delete(k));
    }
    return r;
  };
  const pipSettings = () => (pip ??= readPipSettings(o.env));
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

  return {
    envsDir: o.envsDir,
    async forSkill(skill) {
      const reg = declaresNode(skill) ? await npmRegistry() : undefined;
      const spec = readEnvSpec(skill.dir, skill.files, o.config.skills[skill.name], sha256, reg);
      if (isEmptySpec(spec)) return undefined;
      const rt = await runtime({ python: spec.python.length > 0, node: Object.keys(spec.node).length > 0 });
      const id = envId(spec, rt, o.config.allow_source);
      return { id, spec, dir: envDir(o.envsDir, id), ready: readManifest(o.envsDir, id) !== undefined };
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
