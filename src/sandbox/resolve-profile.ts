import type { Profile } from './profile-schema.js';

const NUMERIC = [
  'wallTimeMs',
  'cpuSeconds',
  'memoryMiB',
  'pids',
  'tmpfsMiB',
  'fileSizeMiB',
  'maxOutputBytes',
  'openFiles',
] as const;

export interface ProfileResolution {
  /** The profile to run with. */
  profile: Profile;
  /** Name the skill asked for, if any. */
  requested?: string;
  /**
   * Fields in which the requested profile is looser than the operator's default. When not empty the
   * request was refused and `profile` is the operator's default: a skill may ask for stricter, never looser.
   */
  looser: string[];
}

/** Does pattern list `base` admit env name pattern `p`? `LC_ALL` is covered by `LC_*`. */
function envCovered(base: readonly string[], p: string): boolean {
  return base.some((b) => b === p || (b.endsWith('*') && p.startsWith(b.slice(0, -1))));
}

/** Fields in which `candidate` would grant more than `baseline`. Empty = at least as strict everywhere. */
export function looserFields(candidate: Profile, baseline: Profile): string[] {
  const out: string[] = [];
  if (candidate.sandbox === 'off' && baseline.sandbox !== 'off') out.push('sandbox');
  if (candidate.network === 'full' && baseline.network !== 'full') out.push('network');
  for (const k of NUMERIC) if (candidate[k] > baseline[k]) out.push(k);
  if (candidate.allowSpawn && !baseline.allowSpawn) out.push('allowSpawn');
  if (candidate.env.allow.some((p) => !envCovered(baseline.env.allow, p))) out.push('env.allow');
  return out;
}

/**
 * Picks the profile for one call. The operator's default applies unless the skill asks for a profile that
 * is at least as strict in every field; a looser request is not granted here (the caller may refuse the
 * call or ask a person, see `looser`).
 */
export function resolveProfile(operatorDefault: Profile, skillRequested?: Profile): ProfileResolution {
  if (skillRequested === undefined) return { profile: operatorDefault, looser: [] };
  const looser = looserFields(skillRequested, operatorDefault);
  return {
    profile: looser.length === 0 ? skillRequested : operatorDefault,
    requested: skillRequested.name,
    looser,
  };
}
