import { statSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { SkillsError } from '../errors.js';
import type { Bundle } from '../skills/bundle-hash.js';
import { resolveSkillPath } from '../skills/resolve-skill-path.js';

export interface RealScript {
  /** The file the path stands for, relative to the skill folder (POSIX): what is bound, matched, shown and run. */
  script: string;
  /** Its realpath, inside the skill folder. */
  scriptAbs: string;
  /** Other paths of the bundle naming the same file (links to it, hard links), sorted: rules on them apply too. */
  aliases: string[];
}

/**
 * The real file behind a script path of a skill: links inside the skill are followed to the file they name, which
 * must itself be part of the bundle (links leaving the skill, or into caches and dependency folders, are refused).
 * Its aliases are the bundle's other paths that are the same file (same device and inode), found among the entries
 * with the same content only.
 */
export function realScript(dir: string, skillName: string, bundle: Bundle, path: string): RealScript {
  const scriptAbs = resolveSkillPath(dir, path, skillName);
  const script = relative(dir, scriptAbs).split(sep).join('/');
  const entry = bundle.entries.find((e) => e.path === script);
  if (entry === undefined) {
    throw new SkillsError('SCRIPT_NOT_FOUND', `"${path}" is not part of skill "${skillName}"`, {
      hint: 'Dependency folders, caches and links that leave the skill (or lead into those) are never run.',
    });
  }
  const real = statSync(scriptAbs);
  const aliases = bundle.entries
    .filter((e) => e.path !== script && e.sha256 === entry.sha256)
    .filter((e) => {
      const st = statSync(join(dir, e.path), { throwIfNoEntry: false });
      return st?.dev === real.dev && st.ino === real.ino;
    })
    .map((e) => e.path);
  return { script, scriptAbs, aliases };
}
