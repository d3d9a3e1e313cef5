import { scanSkillScripts, type ScriptScan } from '../gate/index.js';
import type { Profile } from '../sandbox/profile-schema.js';
import { createBundleStore } from '../skills/bundle-store.js';
import type { Skill } from '../skills/types.js';
import { entryInputOf, type EntryInput } from './entry-input.js';
import type { EnvResolver } from '../envs/create-env-resolver.js';
import type { ExecuteDeps } from './execute-call.js';
import type { RunSlots } from './run-slots.js';
import { createUnrecordedFinishes, type UnrecordedFinishes } from './unrecorded-finishes.js';
import type { RunnerDeps } from './runner-types.js';

/** What the runner computes once and reuses across calls: input schemas, script scans, sandbox profiles. */
export interface CallCaches {
  entryInput: (skill: Skill) => EntryInput;
  /** The scan depends only on file contents: cached per bundle hash. */
  scan: (skill: Skill, bundleSha256: string) => Promise<ScriptScan>;
  /** Sandbox profiles by name, loaded once (a failed load is tried again next time). */
  profile: (name: string) => Promise<Profile>;
  /** What running a call needs (the sandbox is created on first need). */
  exec: () => Promise<ExecuteDeps>;
  /** The ends of runs the audit log refused, waiting to be written. */
  unrecorded: UnrecordedFinishes;
}

export function createCallCaches(
  deps: Pick<
    RunnerDeps,
    'config' | 'sandbox' | 'env' | 'runsDir' | 'bundlesDir' | 'serverPaths' | 'privatePaths' | 'log' | 'audit'
  >,
  run: { envs: EnvResolver; slots: RunSlots },
): CallCaches {
  const unrecorded = createUnrecordedFinishes({ audit: deps.audit, log: deps.log });
  const scans = new Map<string, Promise<ScriptScan>>();
  const entries = new Map<string, EntryInput>();
  const profiles = new Map<string, Promise<Profile>>();
  const bundles = createBundleStore(deps.bundlesDir);

  const entryInput = (skill: Skill): EntryInput => {
    const entry = skill.files.find((f) => f.path === skill.entryPoint);
    const key = `${skill.dir}\0${skill.entryPoint ?? ''}\0${entry?.size ?? ''}`;
    let e = entries.get(key);
    if (e === undefined) entries.set(key, (e = entryInputOf(skill)));
    return e;
  };

  const scan = (skill: Skill, bundleSha256: string): Promise<ScriptScan> => {
    let s = scans.get(bundleSha256);
    if (s === undefined) scans.set(bundleSha256, (s = scanSkillScripts(skill)));
    return s;
  };

  const profile = (name: string): Promise<Profile> => {
    let p = profiles.get(name);
    if (p === undefined) {
      profiles.set(name, (p = deps.sandbox().then((sandbox) => sandbox.loadProfile(name))));
      p.catch(() => profiles.delete(name));
    }
    return p;
  };

  const exec = async (): Promise<ExecuteDeps> => {
    const sandbox = await deps.sandbox();
    return {
      config: deps.config,
      sandbox,
      env: deps.env,
      runsDir: deps.runsDir,
      serverPaths: deps.serverPaths ?? [],
      privatePaths: deps.privatePaths ?? [],
      bundles,
      profile,
      envs: run.envs,
      slots: run.slots,
      unrecorded,
      log: deps.log,
    };
  };

  return { entryInput, scan, profile, exec, unrecorded };
}
