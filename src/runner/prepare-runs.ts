import { setImmediate as yieldToCalls } from 'node:timers/promises';
import { effectiveRequests } from '../gate/index.js';
import { interpreterForScript } from '../sandbox/resolve-interpreter.js';
import type { Sandbox } from '../sandbox/create-sandbox.js';
import { hashBundle } from '../skills/bundle-hash.js';
import type { Skill } from '../skills/types.js';
import type { CallCaches } from './call-caches.js';
import { callProfile } from './call-profile.js';
import type { RunnerDeps } from './runner-types.js';

/** The most interpreters found ahead of the first run (a catalog names a handful: python3, node, bash). */
const MAX_INTERPRETERS = 8;
/** The most skills whose bundle is scanned and profile loaded ahead of the first run. */
export const MAX_PREPARED_SKILLS = 8;

export type PrepareRunsDeps = Pick<RunnerDeps, 'audit' | 'sandbox' | 'catalog' | 'log' | 'config'> & {
  caches: Pick<CallCaches, 'scan' | 'profile'>;
};

/**
 * The one-time work of a server's first run, done ahead of it: opens the audit log, probes the sandbox (which also
 * spawns its first launcher), finds the interpreters the catalog's executable skills start with, and for the first
 * {@link MAX_PREPARED_SKILLS} of them hashes and scans the bundle and loads the sandbox profiles a call would use.
 * Each step fills the cache the call reads (shared, opened once), so a call that comes first waits for the step in
 * flight rather than starting its own. Nothing here runs a skill's code: scans read files, the probe runs the
 * sandbox's own check. Never rejects: a step that fails is logged at debug and left to the call, which does it
 * itself and reports what fails as it always did.
 */
export async function prepareRuns(deps: PrepareRunsDeps): Promise<void> {
  const log = deps.log;
  const audit = deps.audit().then(
    () => undefined,
    (err: unknown) => log.warn({ err }, 'could not open the audit log ahead of the first run'),
  );
  const runnable = deps
    .catalog()
    .skills.filter((s) => s.entryPoint !== undefined && interpreterForScript(s.entryPoint) !== undefined);
  const sandbox = deps.sandbox().then(async (s) => {
    const p = await s.probe();
    if (!p.healthy) {
      log.warn({ diagnosis: p.diagnosis }, 'sandbox unavailable: skill scripts will be refused');
      return;
    }
    log.info({ adapter: p.adapter, limits: p.limits }, 'sandbox ready');
    await findInterpreters(s, runnable);
  });
  const skills = prepareSkills(deps, runnable.slice(0, MAX_PREPARED_SKILLS));
  await Promise.all([
    audit,
    sandbox.catch((err: unknown) => log.warn({ err }, 'sandbox probe failed')),
    skills,
  ]);
}

async function findInterpreters(s: Sandbox, runnable: readonly Skill[]): Promise<void> {
  const names = new Set<string>();
  for (const skill of runnable) {
    names.add(interpreterForScript(skill.entryPoint!)!);
    if (names.size >= MAX_INTERPRETERS) break;
  }
  // A name the host lacks is the run's to report (its skill is refused then), not the start's.
  await Promise.all([...names].map((n) => s.interpreters.resolve(n).catch(() => undefined)));
}

/** Scans each skill's bundle and loads its profiles, one skill at a time, letting a call that arrives go first. */
async function prepareSkills(deps: PrepareRunsDeps, skills: readonly Skill[]): Promise<void> {
  for (const skill of skills) {
    await yieldToCalls();
    try {
      const bundle = hashBundle(skill.dir);
      const grants = effectiveRequests(skill.requests, deps.config.skill_overrides[skill.name]);
      await Promise.all([
        deps.caches.scan(skill, bundle.sha256),
        callProfile(grants, deps.config, deps.caches.profile),
      ]);
    } catch (err) {
      deps.log.debug({ err, skill: skill.name }, 'could not prepare a skill ahead of its first run');
    }
  }
}
