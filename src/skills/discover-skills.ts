import { readdirSync, realpathSync, statSync } from 'node:fs';
import { join, resolve, sep } from 'node:path';
import { isInside } from './list-skill-files.js';
import { skillFileOf } from './load-skill.js';
import type { Finding } from './types.js';

export interface SkillCandidate {
  /** realpath of the skill folder. */
  dir: string;
  /** The configured root it was found under (resolved). */
  root: string;
  /** The folder name as found (a symlink's own name). */
  folderName: string;
  /** `SKILL.md` or `skill.md`; undefined for a plain subfolder, which holds a skill only if it has one of them. */
  skillFile?: string;
}

export interface Discovery {
  candidates: SkillCandidate[];
  findings: Finding[];
}

/**
 * Finds the folders that may hold a skill: a root that is itself a skill, or folders one level down, or one level down a nested
 * `skills/` folder (plugin repos). Symlinked folders are followed only when their target stays inside one of the
 * roots. Order: roots in the given order, entries by name.
 */
export function discoverSkills(roots: readonly string[]): Discovery {
  const findings: Finding[] = [];
  const candidates: SkillCandidate[] = [];
  const realRoots: string[] = [];
  for (const r of roots) {
    try {
      realRoots.push(realpathSync(resolve(r)));
    } catch {
      findings.push({
        path: resolve(r),
        rule: 'root-missing',
        severity: 'error',
        message: 'skills folder does not exist; check --skills / skills: in the config',
      });
    }
  }
  const seen = new Set<string>();
  const add = (dir: string, root: string, folderName: string, skillFile: string | undefined) => {
    if (seen.has(dir)) return;
    seen.add(dir);
    candidates.push(
      skillFile === undefined ? { dir, root, folderName } : { dir, root, folderName, skillFile },
    );
  };
  const scan = (folder: string, root: string) => {
    let entries;
    try {
      entries = readdirSync(folder, { withFileTypes: true });
    } catch {
      return;
    }
    entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const e of entries) {
      if (e.name.startsWith('.') || e.name === 'node_modules') continue;
      const path = `${folder}${sep}${e.name}`; // a real folder path and a plain name: nothing to normalize
      if (e.isDirectory()) {
        // `folder` is a realpath, so a plain subfolder's path is real too: no realpath call needed. Whether it holds
        // a skill file is learnt by opening it when it is loaded (one system call per skill fewer).
        add(path, root, e.name, undefined);
        continue;
      }
      if (!e.isSymbolicLink()) continue;
      let real: string;
      try {
        real = realpathSync(path);
        if (!statSync(real).isDirectory()) continue;
      } catch {
        continue;
      }
      const skillFile = skillFileOf(real);
      if (skillFile === undefined) continue;
      if (!realRoots.some((r) => isInside(r, real))) {
        findings.push({
          path,
          rule: 'symlink-outside-root',
          severity: 'error',
          message: 'skill folder is a symlink to a place outside every skills root; skipped',
        });
        continue;
      }
      add(real, root, e.name, skillFile);
    }
  };
  for (const root of realRoots) {
    const rootSkillFile = skillFileOf(root);
    if (rootSkillFile !== undefined) {
      add(root, root, root.split('/').pop() ?? root, rootSkillFile);
      continue;
    }
    scan(root, root);
    const nested = join(root, 'skills');
    if (skillFileOf(nested) === undefined) {
      try {
        if (statSync(nested).isDirectory()) scan(nested, root);
      } catch {
        // no nested skills/ folder
      }
    }
  }
  return { candidates, findings };
}
