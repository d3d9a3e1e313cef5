import { chmodSync, lstatSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { setImmediate as yieldToCalls } from 'node:timers/promises';
import { effectiveRequests } from '../gate/index.js';
import { interpreterForScript } from '../sandbox/resolve-interpreter.js';
import type { Sandbox } from '../sandbox/create-sandbox.js';
import { hashBundle } from '../skills/bundle-hash.js';
import type { Skill } from '../skills/types.js';
import type { CallCaches } from './call-caches.js';
import { callProfile } from './call-profile.js';
import type { RunnerDeps } from './runner-types.js';
import { SESSIONS_FOLDER } from './session-folder.js';

/** The most interpreters found ahead of the first run (a catalog names a handful: python3, node, bash). */
const MAX_INTERPRETERS = 8;
/** The most skills whose bundle is scanned and profile loaded ahead of the first run. */
export const MAX_PREPARED_SKILLS = 8;

export type PrepareRunsDeps = Pick<
  RunnerDeps,
  'audit' | 'sandbox' | 'catalog' | 'log' | 'config' | 'runsDir' | 'bundlesDir'
> & {
  caches: Pick<CallCaches, 'scan' | 'profile'>;
};

/**
 * The one-time work of a server's first run, done ahead of it: opens the audit log, probes the sandbox (which also
 * spawns its first launcher), finds the interpreters the catalog's executable skills start with, and for the first
 * {@link MAX_PREPARED_SKILLS} of them hashes and scans the bundle and loads the sandbox profiles a call would use,
 * then has the sandbox get ready the launcher their runs need (a root server's pre-staged one). Each step fills the
 * cache the call reads (shared, opened once), so a call that comes first waits for the step in flight rather than
 * starting its own. Nothing here runs a skill's code (scans read files, the probe runs the sandbox's own check, a
 * launcher waits for a run), nor copies a bundle: that copy is made after approval. Never rejects: a step that fails
 * is logged at debug and left to the call, which does it itself and reports what fails as it always did.
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
  const first = runnable.slice(0, MAX_PREPARED_SKILLS);
  const skills = prepareSkills(deps, first);
  const sandbox = deps.sandbox().then(async (s) => {
    const p = await s.probe();
    if (!p.healthy) {
      log.warn({ diagnosis: p.diagnosis }, 'sandbox unavailable: skill scripts will be refused');
      return;
    }
    log.info({ adapter: p.adapter, limits: p.limits }, 'sandbox ready');
    await findInterpreters(s, runnable);
    // The launcher last: it is what a call needs least soon, and staging it costs the most.
    await skills;
    const folders = runFolders(deps);
    await s.prestage?.([...new Set(first.map((k) => interpreterForScript(k.entryPoint!)!))], folders);
  });
  await Promise.all([
    audit,
    sandbox.catch((err: unknown) => log.warn({ err }, 'sandbox probe failed')),
    skills,
  ]);
}

/**
 * The folders a run binds a folder made in (folder → writable): the bundle copies, the runs folder (output) and
 * the sessions folder. Made as a run makes them (same modes), so a launcher can be staged for them ahead of it.
 */
function runFolders(deps: PrepareRunsDeps): Map<string, boolean> {
  const folders = new Map<string, boolean>();
  try {
    mkdirSync(deps.bundlesDir, { recursive: true, mode: 0o711 });
    folders.set(deps.bundlesDir, false);
    mkdirSync(deps.runsDir, { recursive: true, mode: 0o711 });
    folders.set(deps.runsDir, true);
    if (deps.config.runs.session_folder.enabled) {
      const sessions = join(deps.runsDir, SESSIONS_FOLDER);
      mkdirSync(sessions, { recursive: true, mode: 0o711 });
      if ((lstatSync(sessions).mode & 0o777) !== 0o711) chmodSync(sessions, 0o711);
      folders.set(sessions, true);
    }
  } catch (err) {
    deps.log.debug({ err }, 'could not make the runs folder ahead of the first run');
  }
  return folders;
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
      // Not the bundle's copy: that is made after approval, from the files then, which must still match.
      await Promise.all([
        deps.caches.scan(skill, bundle.sha256),
        callProfile(grants, deps.config, deps.caches.profile),
      ]);
    } catch (err) {
      deps.log.debug({ err, skill: skill.name }, 'could not prepare a skill ahead of its first run');
    }
  }
}
