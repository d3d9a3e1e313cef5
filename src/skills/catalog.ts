import { discoverSkills, isListingUnchanged, type Discovery, type ListingStamps } from './discover-skills.js';
import { isSettled, isUnchanged, type FolderLoad } from './folder-load.js';
import { loadSkill, MAX_SKILL_MD_BYTES } from './load-skill.js';
import type { Finding, Skill, SkillCandidate } from './types.js';

/** An immutable snapshot of the skills being served. Reloads produce a new one. */
export interface Catalog {
  readonly roots: readonly string[];
  /** Sorted by name. */
  readonly skills: readonly Skill[];
  /** Load warnings and reasons skills were skipped (what the server logs). */
  readonly findings: readonly Finding[];
  /** Everything lint reports, in discovery order. */
  readonly lint: readonly Finding[];
  /** What each candidate folder gave, in discovery order: a later load reuses the ones still unchanged. */
  readonly folders: readonly FolderLoad[];
  /** The folders its discovery listed, stamped, when a later load may take `folders` instead of listing them. */
  readonly listing?: ListingStamps;
  get(name: string): Skill | undefined;
  byToolName(toolName: string): Skill | undefined;
}

/** Tool names the server itself uses; a skill whose tool name collides gets a hashed name instead. */
export const RESERVED_TOOL_NAMES: ReadonlySet<string> = new Set([
  'read_skill_file',
  'run_skill_script',
  'list_skills',
  'load_skill',
]);

export interface LoadCatalogOptions {
  /**
   * Earlier loads by folder (a previous catalog's, or the start-up cache's). A candidate whose earlier load is
   * stamped and still unchanged ({@link isUnchanged}: one lstat per folder and file) is not read again; every other
   * one is loaded and stamped.
   */
  reuse?: ReadonlyMap<string, FolderLoad>;
  /** Folders to read again even when they look unchanged (a skill file no longer held what was validated). */
  fresh?: ReadonlySet<string>;
  /**
   * When given, a reused load is checked only as far as its head (`isUnchanged(load, 'head')`: its folder and skill
   * file, what the skill's name, description and its being a skill depend on) and is listed here: the rest of its
   * stamps must be checked (`isUnchanged(load, 'rest')`) before anything else of it is served.
   */
  unchecked?: FolderLoad[];
  /** The clock stamps are judged by (tests move it). */
  now?: () => number;
  /**
   * An earlier discovery (a previous catalog's, or the start-up cache's; see {@link listedOf}): while the folders it
   * listed still have their stamps, its folders are the candidates, and the roots are not listed again.
   */
  listed?: Listed;
}

/** An earlier discovery: the stamps of the folders it listed, and what it found in them, in order. */
export interface Listed {
  stamps: ListingStamps;
  loads: readonly FolderLoad[];
}

/** The catalog's discovery, for the next load's `listed`. */
export const listedOf = (catalog: Catalog): Listed | undefined =>
  catalog.listing === undefined ? undefined : { stamps: catalog.listing, loads: catalog.folders };

const candidateOf = (l: FolderLoad): SkillCandidate =>
  l.knownFile === undefined
    ? { dir: l.dir, root: l.root, folderName: l.folderName }
    : { dir: l.dir, root: l.root, folderName: l.folderName, skillFile: l.knownFile };

/** Discovers and loads every skill under the roots. Never throws for bad skills: they are reported and skipped. */
export function loadCatalog(roots: readonly string[], opts: LoadCatalogOptions = {}): Catalog {
  const stamp = opts.reuse !== undefined;
  const startedMs = stamp ? (opts.now ?? Date.now)() : 0;
  const listed =
    opts.listed !== undefined && isListingUnchanged(roots, opts.listed.stamps) ? opts.listed : undefined;
  const discovery: Discovery =
    listed === undefined
      ? discoverSkills(roots, { stamp })
      : { candidates: listed.loads.map(candidateOf), findings: [], listing: listed.stamps };
  const { candidates, findings: discoveryFindings } = discovery;
  // Listed just now, or so recently that a change in the same clock tick could have left its stamps as they were.
  const listing =
    discovery.listing !== undefined &&
    (listed !== undefined || isSettled({ folders: discovery.listing.folders.flat(), files: [] }, startedMs))
      ? discovery.listing
      : undefined;
  const findings: Finding[] = [...discoveryFindings];
  const lint: Finding[] = [...discoveryFindings];
  const folders: FolderLoad[] = [];
  /** Each name's first claimant, and every claimant of a name claimed more than once. */
  const first = new Map<string, Skill>();
  const shared = new Map<string, Skill[]>();
  // Every SKILL.md is read into this one buffer and decoded from it: thousands of files allocate nothing for bytes.
  let scratch: Buffer | undefined;
  const { unchecked } = opts;
  for (const c of candidates) {
    const earlier = opts.reuse?.get(c.dir);
    const reused =
      earlier !== undefined &&
      opts.fresh?.has(c.dir) !== true &&
      isSameCandidate(earlier, c) &&
      isUnchanged(earlier, unchecked === undefined ? 'all' : 'head');
    if (reused && unchecked !== undefined) unchecked.push(earlier);
    const loaded = reused
      ? earlier
      : loadSkill(c, {
          scratch: (scratch ??= Buffer.allocUnsafe(MAX_SKILL_MD_BYTES)),
          stamp,
          ...(opts.now === undefined ? {} : { now: opts.now }),
        });
    folders.push(loaded);
    if (loaded.findings.length > 0) findings.push(...loaded.findings);
    if (loaded.lint.length > 0) lint.push(...loaded.lint);
    const skill = loaded.skill;
    if (skill === undefined) continue;
    const had = first.get(skill.name);
    if (had === undefined) {
      first.set(skill.name, skill);
      continue;
    }
    const claimants = shared.get(skill.name);
    if (claimants === undefined) shared.set(skill.name, [had, skill]);
    else claimants.push(skill);
  }
  // A name is an identity: when two folders claim it (one root or several, at start or on reload), neither is
  // served until one is renamed, so a new folder can never take over another's name, rules or grants.
  const served: Skill[] = [];
  for (const [name, skill] of first) {
    const skills = shared.get(name);
    if (skills === undefined) {
      served.push(skill);
      continue;
    }
    const where = skills.map((k) => k.dir).join(', ');
    for (const skill of skills) {
      const f: Finding = {
        path: `${skill.dir}/${skill.skillFile}`,
        rule: 'duplicate-name',
        severity: 'error',
        message: `skill name "${name}" is claimed by ${skills.length} folders (${where}); none is served until each has its own name`,
      };
      findings.push(f);
      lint.push(f);
    }
  }
  return createCatalog(roots, served, findings, lint, folders, listing);
}

/** A catalog's folder loads by folder, for the next load's `reuse`. */
export const loadsOf = (catalog: Catalog): Map<string, FolderLoad> =>
  new Map(catalog.folders.map((f) => [f.dir, f]));

const isSameCandidate = (l: FolderLoad, c: SkillCandidate): boolean =>
  l.root === c.root && l.folderName === c.folderName && l.knownFile === c.skillFile;

/** Discovery findings: what a catalog reports about its roots before loading any folder. */
const DISCOVERY_RULES: ReadonlySet<string> = new Set(['root-missing', 'symlink-outside-root']);

/**
 * True when a discovery made now finds the folders the catalog was loaded from, in the same order, and reports the
 * same about its roots: a load now would read the same candidates.
 */
export function hasSameCandidates(catalog: Catalog, now: Discovery): boolean {
  const { folders } = catalog;
  if (folders.length !== now.candidates.length) return false;
  for (let i = 0; i < folders.length; i++) {
    const c = now.candidates[i]!;
    if (folders[i]!.dir !== c.dir || !isSameCandidate(folders[i]!, c)) return false;
  }
  const before = catalog.findings.filter((f) => DISCOVERY_RULES.has(f.rule));
  return (
    before.length === now.findings.length &&
    before.every((f, i) => f.path === now.findings[i]!.path && f.rule === now.findings[i]!.rule)
  );
}

export function createCatalog(
  roots: readonly string[],
  skills: Skill[],
  findings: Finding[],
  lint: Finding[],
  folders: FolderLoad[] = [],
  listing?: ListingStamps,
): Catalog {
  const sorted = [...skills].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  const byTool = new Map<string, Skill>();
  // A skill whose tool name is taken is served as a copy under another: the loaded skill is never changed, so a
  // later catalog can share it.
  const served = sorted.map((s) => {
    const skill =
      byTool.has(s.toolName) || RESERVED_TOOL_NAMES.has(s.toolName)
        ? { ...s, toolName: uniqueName(s, byTool) }
        : s;
    byTool.set(skill.toolName, skill);
    return skill;
  });
  const byName = new Map(served.map((s) => [s.name, s]));
  return {
    roots,
    skills: served,
    findings,
    lint,
    folders,
    ...(listing === undefined ? {} : { listing }),
    get: (name) => byName.get(name),
    byToolName: (t) => byTool.get(t),
  };
}

function uniqueName(skill: Skill, taken: Map<string, Skill>): string {
  for (let i = 1; ; i++) {
    const suffix = `-${i}`;
    const candidate = `${skill.toolName.slice(0, 40 - suffix.length)}${suffix}`;
    if (!taken.has(candidate) && !RESERVED_TOOL_NAMES.has(candidate)) return candidate;
  }
}
