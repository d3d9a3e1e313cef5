import { lstatSync, readdirSync, realpathSync, statSync, type Stats } from 'node:fs';
import { join, resolve, sep } from 'node:path';
import { folderStamp, type FolderStamp } from './folder-load.js';
import { isInside } from './list-skill-files.js';
import { skillFileOf } from './load-skill.js';
import type { Finding, SkillCandidate } from './types.js';

export interface Discovery {
  candidates: SkillCandidate[];
  findings: Finding[];
  /** With `stamp`, when every root exists and no symlink was met: the folders listed, as they were. */
  listing?: ListingStamps;
}

/**
 * The folders a discovery listed, stamped before it read them: each real root (path '') and its nested `skills/`
 * folder when it is one ('skills'). While they all still look the same, the roots hold the same entries and a
 * discovery would find the same candidates (see `isListingUnchanged`); a symlink among them can change where it
 * leads without any of them changing, so a discovery that met one has no listing.
 */
export interface ListingStamps {
  /** The real roots, in the order of the configured ones. */
  roots: string[];
  /** Per root, its stamps. */
  folders: FolderStamp[][];
}

/**
 * Finds the folders that may hold a skill: a root that is itself a skill, or folders one level down, or one level down a nested
 * `skills/` folder (plugin repos). Symlinked folders are followed only when their target stays inside one of the
 * roots. Order: roots in the given order, entries by name.
 */
export function discoverSkills(roots: readonly string[], opts: { stamp?: boolean } = {}): Discovery {
  const findings: Finding[] = [];
  let stamped = opts.stamp === true;
  const folders: FolderStamp[][] = [];
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
      stamped = false;
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
      stamped = false;
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
      stamped = false;
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
    // Stamped before anything in it is looked at: a change made while it is read moves its times past the stamp.
    const own: FolderStamp[] = [];
    if (stamped) {
      const st = lstatIfAny(root);
      if (st === undefined) stamped = false;
      else own.push(folderStamp('', st));
      folders.push(own);
    }
    const rootSkillFile = skillFileOf(root);
    if (rootSkillFile !== undefined) {
      add(root, root, root.split('/').pop() ?? root, rootSkillFile);
      continue;
    }
    scan(root, root);
    const nested = join(root, 'skills');
    if (stamped) {
      const st = lstatIfAny(nested);
      if (st?.isSymbolicLink() === true) stamped = false;
      else if (st?.isDirectory() === true) own.push(folderStamp('skills', st));
    }
    if (skillFileOf(nested) === undefined) {
      try {
        if (statSync(nested).isDirectory()) scan(nested, root);
      } catch {
        // no nested skills/ folder
      }
    }
  }
  return stamped
    ? { candidates, findings, listing: { roots: realRoots, folders } }
    : { candidates, findings };
}

/**
 * True when the roots still resolve to the listed real roots and each listed folder still has its stamp: then a
 * discovery now would list the same entries, and find the same candidates. One realpath per root and one lstat per
 * listed folder.
 */
export function isListingUnchanged(roots: readonly string[], listing: ListingStamps): boolean {
  if (roots.length !== listing.roots.length) return false;
  for (let i = 0; i < roots.length; i++) {
    let real: string;
    try {
      real = realpathSync(resolve(roots[i]!));
    } catch {
      return false;
    }
    const own = listing.folders[i];
    if (real !== listing.roots[i] || own === undefined || own[0]?.path !== '') return false;
    for (const f of own) {
      const st = lstatIfAny(f.path === '' ? real : `${real}${sep}${f.path}`);
      if (
        st?.isDirectory() !== true ||
        st.mtimeMs !== f.mtimeMs ||
        st.ctimeMs !== f.ctimeMs ||
        st.ino !== f.ino
      )
        return false;
    }
  }
  return true;
}

/** The path's lstat; undefined when there is none or it cannot be had. */
function lstatIfAny(path: string): Stats | undefined {
  try {
    return lstatSync(path, { throwIfNoEntry: false });
  } catch {
    return undefined;
  }
}
