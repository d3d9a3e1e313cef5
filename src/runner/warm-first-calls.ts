import { mkdirSync } from 'node:fs';
import { effectiveRequests } from '../gate/index.js';
import { interpreterForScript } from '../sandbox/resolve-interpreter.js';
import { hashBundle } from '../skills/bundle-hash.js';
import type { Skill } from '../skills/types.js';
import type { CallCaches } from './call-caches.js';
import { callProfile } from './call-profile.js';
import type { RunnerDeps } from './runner-types.js';
import { prepareSessionsParent } from './session-folder.js';

/** The executable skills whose first call is prepared ahead (a session's first call is most often of one of these). */
const MAX_SKILLS = 4;
/** A skill whose files add up to more is left to its call: it is not read for a call that may never come. */
const MAX_BYTES = 8 * 1024 * 1024;

/**
 * What the first gated call of a skill computes once and every later one reuses, computed ahead of it for the
 * catalog's first executable skills: the bundle's digest, the script scan, the sandbox profile and the environment's
 * lookup. (Not the verified copy a run executes from: made by the call, from the files it bound, a change since is
 * refused there.) Then the sandbox gets ready for runs like theirs (a root server's launcher, pre-staged with the
 * folders such a run binds). Nothing of a skill runs. Never rejects: a skill whose preparation fails is left to its
 * call, which reports what went wrong as it always did. Returns how many skills it prepared.
 */
export async function warmFirstCalls(
  deps: Pick<RunnerDeps, 'catalog' | 'config' | 'log' | 'runsDir' | 'bundlesDir'>,
  caches: CallCaches,
): Promise<number> {
  const exec = await caches.exec().catch((err: unknown) => {
    deps.log.debug({ err }, 'could not prepare first calls ahead: the run pipeline did not start');
    return undefined;
  });
  if (exec === undefined) return 0;
  const interpreters = new Set<string>();
  let prepared = 0;
  for (const skill of deps.catalog().skills.filter(isExecutable).slice(0, MAX_SKILLS)) {
    try {
      const grants = effectiveRequests(skill.requests, deps.config.skill_overrides[skill.name]);
      await callProfile(grants, deps.config, caches.profile);
      await exec.envs?.forSkill(skill);
      caches.entryInput(skill);
      // Hashing reads every file, on the event loop: a large skill is left to its call.
      if (skill.files.reduce((n, f) => n + f.size, 0) > MAX_BYTES) continue;
      await caches.scan(skill, hashBundle(skill.dir).sha256);
      prepared += 1;
      const interpreter = skill.entryPoint === undefined ? undefined : interpreterForScript(skill.entryPoint);
      if (interpreter !== undefined) interpreters.add(interpreter);
    } catch (err) {
      deps.log.debug({ err, skill: skill.name }, 'could not prepare the first call of a skill ahead');
    }
  }
  if (prepared === 0) return 0;
  try {
    // The folders a call binds: its skill's copy (in the bundles folder once its first call made it), its own
    // folder in the runs folder, its session's folder.
    for (const dir of [deps.runsDir, deps.bundlesDir]) mkdirSync(dir, { recursive: true, mode: 0o711 });
    const sessions = deps.config.runs.session_folder.enabled ? [prepareSessionsParent(deps.runsDir)] : [];
    await exec.sandbox.prestage?.({
      interpreters: [...interpreters],
      sources: [
        { src: deps.bundlesDir, write: false, childOf: true },
        ...[deps.runsDir, ...sessions].map((src) => ({ src, write: true, childOf: true })),
      ],
    });
  } catch (err) {
    deps.log.debug({ err }, 'could not get the sandbox ready ahead of the first run');
  }
  return prepared;
}

const isExecutable = (skill: Skill) =>
  skill.entryPoint !== undefined || skill.files.some((f) => f.path.startsWith('scripts/'));
