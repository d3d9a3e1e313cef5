import { isSkillsError, SkillsError } from '../errors.js';
import { readSkillBody } from '../skills/read-skill-body.js';
import type { Skill } from '../skills/types.js';
import type { ServerDeps } from './server-deps.js';

/**
 * A skill's instructions exactly as validated, with the skill they belong to. The catalog keeps only a digest of
 * each skill file: when the file changed since (edited, replaced, removed), the skills are reloaded first and the
 * skill as it is now is returned. Throws SKILL_NOT_FOUND when the reload no longer serves it, SKILL_CHANGED when
 * its file changed yet again (or the server cannot reload).
 */
export function skillInstructions(deps: ServerDeps, skill: Skill): { skill: Skill; body: string } {
  try {
    return { skill, body: readSkillBody(skill) };
  } catch (err) {
    if (!isSkillsError(err) || err.code !== 'SKILL_CHANGED' || deps.reloadSkills === undefined) throw err;
    deps.log.info({ skill: skill.name }, 'skill file changed since it was loaded; reloading the skills');
    deps.reloadSkills(skill);
    const current = deps.catalog().get(skill.name);
    if (current === undefined) {
      throw new SkillsError(
        'SKILL_NOT_FOUND',
        `skill "${skill.name}" changed on disk and is no longer served`,
        {
          hint: 'List the tools or skills again; the server log says why it was skipped.',
        },
      );
    }
    return { skill: current, body: readSkillBody(current) };
  }
}
