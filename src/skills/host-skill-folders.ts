import { lstatSync, realpathSync } from 'node:fs';
import { join } from 'node:path';
import { isInside } from './list-skill-files.js';

export type HostScope = 'user' | 'project';

/** Where one host keeps skills: a path under the home folder or under the project (the working directory). */
interface HostLocation {
  host: string;
  scope: HostScope;
  /** Relative to the home folder (user) or the project folder (project). */
  path: string;
}

/**
 * Each host's documented skill folders, in the order they are looked at: the project's, then the user's. Two folders
 * that claim one skill name are refused as any two roots are (neither served). A folder several hosts read
 * (`.claude/skills`, `.agents/skills`) is listed once, under the first host that documents it.
 */
const LOCATIONS: readonly HostLocation[] = [
  { host: 'claude', scope: 'project', path: '.claude/skills' },
  { host: 'agents', scope: 'project', path: '.agents/skills' },
  { host: 'codex', scope: 'project', path: '.codex/skills' },
  { host: 'cursor', scope: 'project', path: '.cursor/skills' },
  { host: 'copilot', scope: 'project', path: '.github/skills' },
  { host: 'gemini', scope: 'project', path: '.gemini/skills' },
  { host: 'goose', scope: 'project', path: '.goose/skills' },
  { host: 'opencode', scope: 'project', path: '.opencode/skills' },
  { host: 'claude', scope: 'user', path: '.claude/skills' },
  { host: 'agents', scope: 'user', path: '.agents/skills' },
  { host: 'agents', scope: 'user', path: '.config/agents/skills' },
  { host: 'codex', scope: 'user', path: '.codex/skills' },
  { host: 'cursor', scope: 'user', path: '.cursor/skills' },
  { host: 'copilot', scope: 'user', path: '.copilot/skills' },
  { host: 'gemini', scope: 'user', path: '.gemini/skills' },
  { host: 'goose', scope: 'user', path: '.config/goose/skills' },
  { host: 'opencode', scope: 'user', path: '.config/opencode/skills' },
];

export interface HostSkillFolder {
  host: string;
  scope: HostScope;
  /** The folder as looked at (home or project joined with the host's path). */
  path: string;
  /** Its realpath: what is served. */
  real: string;
}

export interface HostFolderSkip {
  host: string;
  scope: HostScope;
  path: string;
  /** Why it is not served. */
  reason: string;
}

export interface HostFolderScan {
  found: HostSkillFolder[];
  skipped: HostFolderSkip[];
}

/**
 * The host skill folders that exist under `home` and `project` and may be served: a folder (a symlink is followed
 * only when it leads to a folder inside the same home or project), owned by `uid`, not writable by group or others.
 * A folder that exists but fails one of these is reported in `skipped`, never served. Folders that do not exist are
 * neither. Two locations that lead to the same real folder are served once.
 */
export function findHostSkillFolders(opts: { home: string; project: string; uid: number }): HostFolderScan {
  const found: HostSkillFolder[] = [];
  const skipped: HostFolderSkip[] = [];
  const seen = new Set<string>();
  for (const loc of LOCATIONS) {
    const base = loc.scope === 'user' ? opts.home : opts.project;
    const path = join(base, loc.path);
    const why = checkFolder(path, base, opts.uid);
    if (why === undefined) continue;
    if (typeof why === 'string') {
      skipped.push({ host: loc.host, scope: loc.scope, path, reason: why });
      continue;
    }
    if (seen.has(why.real)) continue;
    seen.add(why.real);
    found.push({ host: loc.host, scope: loc.scope, path, real: why.real });
  }
  return { found, skipped };
}

/** undefined: nothing there; a string: why it is refused; else the real folder. */
function checkFolder(path: string, base: string, uid: number): string | { real: string } | undefined {
  let st;
  try {
    st = lstatSync(path, { throwIfNoEntry: false });
  } catch {
    return undefined;
  }
  if (st === undefined) return undefined;
  let real: string;
  let realBase: string;
  try {
    real = realpathSync(path);
    realBase = realpathSync(base);
  } catch {
    return 'a link that leads nowhere';
  }
  if (!isInside(realBase, real)) return `a link to ${real}, outside ${realBase}`;
  const target = lstatSync(real);
  if (!target.isDirectory()) return 'not a folder';
  if (target.uid !== uid) return `owned by uid ${target.uid}, not by the user running the server (${uid})`;
  if ((target.mode & 0o022) !== 0)
    return `writable by ${(target.mode & 0o002) !== 0 ? 'anyone' : 'its group'} (chmod go-w to serve it)`;
  return { real };
}

/** The host folder a path (a skill folder or root) lies in, if any. */
export function hostFolderOf(folders: readonly HostSkillFolder[], dir: string): HostSkillFolder | undefined {
  return folders.find((f) => isInside(f.real, dir));
}
