import type { Config } from '../config/config-schema.js';
import type { EffectiveRequests } from '../gate/index.js';
import type { Profile } from '../sandbox/profile-schema.js';
import { resolveProfile } from '../sandbox/resolve-profile.js';

/**
 * The profile a call runs with: the operator's for this skill (`skill_overrides`) or `sandbox.profile`, unless the
 * skill asks for one at least as strict. Resolved when the call is prepared, so the guard, the approval form and the
 * run all use the same profile; a missing base profile fails the call before anyone is asked.
 */
export async function callProfile(
  grants: EffectiveRequests,
  config: Pick<Config, 'sandbox'>,
  load: (name: string) => Promise<Profile>,
): Promise<Profile> {
  const base = await load(grants.operator.profile ?? config.sandbox.profile);
  const asked = grants.requests.sandboxProfile;
  const requested = asked === undefined ? undefined : await load(asked).catch(() => undefined);
  return resolveProfile(base, requested).profile;
}

/**
 * The network a call gets: `full` when the skill (or the operator) asks for it, none when the operator set
 * `network: none`, else the profile's own (`network: full` in the profile gives the host network to every skill).
 */
export function callNetwork(grants: EffectiveRequests, profile: Pick<Profile, 'network'>): 'none' | 'full' {
  if (grants.requests.network) return 'full';
  return grants.operator.network === 'none' ? 'none' : profile.network;
}

/** True when the call runs unconfined: the server's sandbox is off, or its profile says `sandbox: off`. */
export const runsUnsandboxed = (
  config: Pick<Config, 'sandbox'>,
  profile: Pick<Profile, 'sandbox'>,
): boolean => config.sandbox.mode === 'off' || profile.sandbox === 'off';
