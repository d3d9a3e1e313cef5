import type { SkillOverride } from '../config/skill-overrides-schema.js';
import type { SkillRequests } from '../skills/types.js';

/** The grants the operator set for one skill (`skill_overrides.<name>`), each replacing the frontmatter's. */
export interface OperatorGrants {
  workspace?: SkillRequests['workspace'];
  network?: 'none' | 'full';
  profile?: string;
}

/** What a call of the skill runs with: the frontmatter's asks with the operator's values in their place. */
export interface EffectiveRequests {
  requests: SkillRequests;
  /** Which of them the operator set (empty when the skill has no override). */
  operator: OperatorGrants;
}

/**
 * The skill's asks with the operator's override applied. An override replaces each value it sets: it may widen
 * (`workspace: write` for a skill that asks nothing) or narrow (`network: none` for one that asks for it). Either way
 * the result is judged by the guard and the policy and shown in the approval exactly like a frontmatter ask; nothing
 * here decides whether a call runs. The operator's `profile` replaces the default profile, not the skill's own
 * `sandbox:` ask, which can still only tighten it.
 */
export function effectiveRequests(
  requests: SkillRequests,
  override: SkillOverride | undefined,
): EffectiveRequests {
  const operator: OperatorGrants = {
    ...(override?.workspace === undefined ? {} : { workspace: override.workspace }),
    ...(override?.network === undefined ? {} : { network: override.network }),
    ...(override?.profile === undefined ? {} : { profile: override.profile }),
  };
  return {
    requests: {
      ...requests,
      ...(operator.workspace === undefined ? {} : { workspace: operator.workspace }),
      ...(operator.network === undefined ? {} : { network: operator.network === 'full' }),
    },
    operator,
  };
}

/** True when the operator set at least one grant for the skill. */
export const hasOperatorGrants = (g: OperatorGrants): boolean => Object.keys(g).length > 0;

/** Where a setting a skill runs with comes from. */
export type GrantSource = 'operator' | 'skill' | 'default';

/** One setting a skill's runs get, and who set it. */
export interface GrantSetting {
  value: string;
  source: GrantSource;
}

/**
 * What the runs of a skill get, setting by setting, with the source of each: the operator's `skill_overrides`, the
 * skill's frontmatter, or the default (`defaultProfile` is `sandbox.profile`). For `list`; the runner uses
 * {@link effectiveRequests}.
 */
export function describeGrants(
  skill: { requests: SkillRequests; frontmatter: Record<string, unknown> },
  override: SkillOverride | undefined,
  defaultProfile: string,
): { workspace: GrantSetting; network: GrantSetting; profile: GrantSetting } {
  const { requests, operator } = effectiveRequests(skill.requests, override);
  const from = (key: keyof OperatorGrants, field: string): GrantSource =>
    operator[key] !== undefined ? 'operator' : skill.frontmatter[field] !== undefined ? 'skill' : 'default';
  return {
    workspace: { value: requests.workspace, source: from('workspace', 'workspace') },
    network: { value: requests.network ? 'full' : 'none', source: from('network', 'network') },
    profile: {
      value: requests.sandboxProfile ?? operator.profile ?? defaultProfile,
      source:
        requests.sandboxProfile !== undefined
          ? 'skill'
          : operator.profile !== undefined
            ? 'operator'
            : 'default',
    },
  };
}
