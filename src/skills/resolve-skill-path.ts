import { realpathSync, statSync } from 'node:fs';
import { join, posix } from 'node:path';
import { SkillsError } from '../errors.js';
import { isInside } from './list-skill-files.js';

/**
 * Checks a path a client sent for a file of a skill, before touching the disk: relative, POSIX, no `..`, no NUL,
 * no drive letters. Returns the normalized relative path.
 */
export function checkRelativePath(path: string): string {
  const bad = (why: string) =>
    new SkillsError('PATH_INVALID', `invalid path "${path.slice(0, 200)}": ${why}`, {
      hint: 'Use a path relative to the skill folder, e.g. "references/guide.md", as listed by the skill tool.',
    });
  if (path === '') throw bad('it is empty');
  if (path.includes('\0')) throw bad('it contains a NUL byte');
  if (path.startsWith('/') || path.startsWith('\\') || /^[a-zA-Z]:/.test(path))
    throw bad('absolute paths are refused');
  const parts = path.split(/[\\/]+/);
  if (parts.includes('..')) {
    throw new SkillsError('PATH_OUTSIDE_SKILL', `path "${path.slice(0, 200)}" leaves the skill folder`, {
      hint: 'Only files inside the skill folder can be read.',
    });
  }
  const norm = posix.normalize(parts.join('/'));
  if (norm === '.' || norm === '') throw bad('it names the skill folder itself');
  return norm;
}

/**
 * Resolves a client-sent path to a real file inside `skillDir` (a realpath). Refuses `..`, absolute paths, symlinks
 * whose target leaves the folder, folders and missing files, each with an actionable SkillsError.
 */
export function resolveSkillPath(skillDir: string, path: string, skillName: string): string {
  const rel = checkRelativePath(path);
  let real: string;
  try {
    real = realpathSync(join(skillDir, rel));
  } catch {
    throw new SkillsError('FILE_NOT_FOUND', `skill "${skillName}" has no file "${rel}"`, {
      hint: `Call the "${skillName}" skill tool (or resources/list) to see its files.`,
    });
  }
  if (!isInside(skillDir, real)) {
    throw new SkillsError('PATH_OUTSIDE_SKILL', `"${rel}" is a link that leaves the skill folder`, {
      hint: 'Only files inside the skill folder can be read.',
    });
  }
  if (!statSync(real).isFile()) {
    throw new SkillsError('PATH_INVALID', `"${rel}" is not a regular file`, {
      hint: `Call the "${skillName}" skill tool to see its files.`,
    });
  }
  return real;
}
