import { statSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { SkillsError } from '../errors.js';
import type { Bundle } from '../skills/bundle-hash.js';
import type { FolderLink } from '../skills/list-skill-files.js';
import { resolveSkillPath } from '../skills/resolve-skill-path.js';

export interface RealScript {
  /** The file the path stands for, relative to the skill folder (POSIX): what is bound, matched, shown and run. */
  script: string;
  /** Its realpath, inside the skill folder. */
  scriptAbs: string;
  /**
   * Other paths naming the same file: the name the call used, the bundle's links and hard links to it, and each of
   * those through a link to a folder that holds it. Rules on them apply too.
   */
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
  const requested = path.replace(/^\.\//, '');
  return {
    script,
    scriptAbs,
    aliases: throughFolderLinks([script, ...aliases, requested], bundle.folderLinks ?? []).slice(1),
  };
}

/** Most names gathered for one file (links to a folder above itself name it endlessly: `a/loop/loop/…`). */
const MAX_NAMES = 64;

/** `names` (the first is the real path), and every name they have through the skill's links to folders. */
function throughFolderLinks(names: readonly string[], links: readonly FolderLink[]): string[] {
  const all = [...new Set(names)];
  for (let i = 0; i < all.length && all.length < MAX_NAMES; i++) {
    const name = all[i]!;
    for (const l of links) {
      const under =
        l.target === ''
          ? `/${name}`
          : name.startsWith(`${l.target}/`)
            ? name.slice(l.target.length)
            : undefined;
      const alias = under === undefined ? undefined : `${l.path}${under}`;
      if (alias !== undefined && !all.includes(alias) && all.length < MAX_NAMES) all.push(alias);
    }
  }
  return all;
}
