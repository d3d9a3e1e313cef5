import * as z from 'zod';
import { SkillDepsSchema } from './dependencies-schema.js';

/** What `workspace`, `network` and `profile` accept; the messages name every choice. */
const oneOf = <T extends readonly [string, ...string[]]>(values: T) =>
  z.enum(values, { error: `expected one of ${values.join(', ')}` });

/**
 * `skill_overrides.<name>` in skills-mcp.yaml: what the operator grants or takes away for one skill, in place of what
 * its SKILL.md frontmatter asks. Each value set here replaces the frontmatter's (it may widen or narrow it) and is
 * shown in the approval form as the operator's; it goes through policy and approval exactly like a frontmatter grant.
 *
 * ```yaml
 * skill_overrides:
 *   docx: { workspace: write }        # the skill may change the workspace (still asked at approval)
 *   fetcher: { network: none }        # the skill asks for the network; it gets none
 *   pdf: { packages: { python: [pypdf] } }
 * ```
 */
export const SkillOverrideSchema = z.strictObject({
  workspace: oneOf(['none', 'read', 'write'] as const)
    .optional()
    .describe(
      'Access to the configured workspace, in place of the frontmatter `workspace`: none, read, or write (write raises the risk; still asked at approval).',
    ),
  network: oneOf(['none', 'full'] as const)
    .optional()
    .describe(
      'Network of its runs, in place of the frontmatter `network`: none (also when the frontmatter or the profile asks for it) or full (raises the risk; still asked at approval).',
    ),
  profile: z
    .string()
    .regex(/^[a-z0-9-]+$/, { error: 'expected a profile name (a-z, 0-9, -)' })
    .optional()
    .describe(
      "Sandbox profile for this skill in place of `sandbox.profile` (a file in sandbox-profiles/); the skill's own `sandbox:` ask may still only tighten it.",
    ),
  packages: SkillDepsSchema.optional().describe(
    'Packages added to what the skill declares, as `dependencies.skills.<name>` (both are added): { python: [pypdf], node: [marked] }.',
  ),
});

export type SkillOverride = z.infer<typeof SkillOverrideSchema>;

export const SkillOverridesSchema = z
  .record(z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, { error: 'expected a skill name' }), SkillOverrideSchema)
  .default({})
  .describe(
    "Per-skill settings of the operator, by skill name, for skills whose SKILL.md you do not own: `workspace`, `network`, `profile`, `packages`. They replace what the skill's frontmatter asks (widen or narrow), are shown in the approval form as the operator's, and are bound into the approval: a changed override asks again. A name no loaded skill has is a warning at start.",
  );
