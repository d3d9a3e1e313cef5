import { openSync } from 'node:fs';
import { sep } from 'node:path';
import { SkillsError } from '../errors.js';
import { MAX_SKILL_MD_BYTES, skillFileSha256 } from './load-skill.js';
import { parseSkillFile } from './parse-skill-file.js';
import { readSmallFile } from './read-small-file.js';
import type { Skill } from './types.js';

/**
 * The skill's instructions (the Markdown after the frontmatter), read from its skill file and served only when the
 * file still holds exactly the bytes that were validated: a catalog keeps their digest, not the text. Throws
 * SKILL_CHANGED when the file was edited, replaced or removed since (the caller reloads the skill).
 */
export function readSkillBody(skill: Skill): string {
  const path = `${skill.dir}${sep}${skill.skillFile}`;
  let bytes: Buffer | undefined;
  try {
    bytes = readSmallFile(openSync(path, 'r'), MAX_SKILL_MD_BYTES).bytes;
  } catch (cause) {
    throw changed(skill, cause);
  }
  if (bytes === undefined || skillFileSha256(bytes) !== skill.skillFileSha256) throw changed(skill);
  // The same bytes parse the same way: this is the body of the frontmatter the catalog validated.
  const parsed = parseSkillFile(bytes, path);
  if (!parsed.ok) throw changed(skill);
  return parsed.parsed.body;
}

const changed = (skill: Skill, cause?: unknown) =>
  new SkillsError('SKILL_CHANGED', `skill "${skill.name}" changed on disk since it was loaded`, {
    hint: 'The server reloads its skills when they change; call again.',
    ...(cause === undefined ? {} : { cause }),
  });
