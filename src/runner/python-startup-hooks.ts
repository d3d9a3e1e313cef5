import { SkillsError } from '../errors.js';

/** A module at the skill root that Python's `site` imports at start-up, before any script (`sitecustomize`, …). */
const HOOK = /^(site|user)customize(\.py|(\.[^./]+)?\.so|\/__init__(\.py|(\.[^./]+)?\.so))$/;

/**
 * Refuses a Python run of a skill whose root holds `sitecustomize` or `usercustomize`: the skill root is on
 * `PYTHONPATH`, so Python would run that file first for every script of the skill, a file no rule names and the
 * approval never shows.
 */
export function refusePythonStartupHooks(files: readonly string[], skillName: string): void {
  const hook = files.find((f) => HOOK.test(f));
  if (hook === undefined) return;
  throw new SkillsError(
    'SKILL_INVALID',
    `skill "${skillName}" holds ${hook}, which Python would run before any of its scripts`,
    {
      hint: 'Nothing was run or asked. Python imports sitecustomize and usercustomize from the skill root at start-up; the skill can move that code into its scripts.',
    },
  );
}
