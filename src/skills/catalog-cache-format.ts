import type { ListingStamps } from './discover-skills.js';
import type { FolderStamp } from './folder-load.js';
import type { Finding, Skill, SkillFile } from './types.js';

/**
 * The catalog cache file: one header line (JSON), then the payload (JSON), whose length and sha256 the header
 * holds. Bump the version whenever a record's fields, or what loading a folder gives, change meaning.
 */
export const CATALOG_CACHE_FORMAT = 'skills-mcp catalog cache';
export const CATALOG_CACHE_VERSION = 1;
/** A cache file larger than this is neither written nor read (about 50,000 skills). */
export const MAX_CATALOG_CACHE_BYTES = 64 * 1024 * 1024;

export interface CacheHeader {
  format: typeof CATALOG_CACHE_FORMAT;
  version: typeof CATALOG_CACHE_VERSION;
  /** The skills-mcp build that wrote it: any other build reads every folder. */
  build: string;
  /** The configured roots it covers. */
  roots: string[];
  /** Length of the payload after the header line, and its sha256 (base64). */
  bytes: number;
  sha256: string;
}

/**
 * A skill as cached: its folder, root and tool name come from the load. What the reader can tell without it is left
 * out: `name` and `description` when they are the frontmatter's, trimmed; `allowedTools` and `warnings` when empty;
 * `requests` when it is {@link DEFAULT_REQUESTS}.
 */
export type CachedSkill = Omit<
  Skill,
  'toolName' | 'dir' | 'root' | 'name' | 'description' | 'allowedTools' | 'requests' | 'warnings'
> &
  Partial<Pick<Skill, 'name' | 'description' | 'allowedTools' | 'requests' | 'warnings'>>;

/** What a skill asks of the sandbox when its frontmatter asks for nothing. */
export const DEFAULT_REQUESTS: Skill['requests'] = Object.freeze({
  network: false,
  workspace: 'read',
  env: Object.freeze([]) as unknown as string[],
});

/** One candidate folder's load. */
export interface CachedLoad {
  /** Index of its root in the payload's `roots`. */
  root: number;
  folderName: string;
  /** realpath of the folder, when it is not `<root>/<folderName>`. */
  dir?: string;
  knownFile?: 'SKILL.md' | 'skill.md';
  folders: FolderStamp[];
  /** Without a skill: the skill file read, if any (with one, its `files`). */
  files?: SkillFile[];
  skill?: CachedSkill;
  /** Without a skill: why (with one, its `warnings`). Left out when empty, as `lint` is. */
  findings?: Finding[];
  lint?: Finding[];
}

export interface CachePayload {
  /** The real roots the loads were found under. */
  roots: string[];
  loads: unknown[];
  /**
   * The stamps of the folders the discovery listed (`ListingStamps`), when `loads` holds a record for every folder
   * it found, in its order: a start may then take them as its candidates instead of listing the roots.
   */
  listing?: unknown;
}

// The checks below run over every record at every start (tens of thousands of objects with 10,000 skills), mostly
// before V8 has optimized them: few calls, plain loops. They check in place: zod, which the rest of the server uses at
// its edges, builds a copy of every object it parses, which took ~160 ms and doubled the records' memory at 10,000
// skills.

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

const DOT_SEGMENT = /(?:^|\/)\.\.?(?:\/|$)/;

/** A path relative to a skill folder, as the listing writes it: POSIX segments, none empty, `.` or `..`. */
export const isRelPath = (v: unknown): v is string =>
  typeof v === 'string' &&
  v.length > 0 &&
  v.length <= 4096 &&
  v[0] !== '/' &&
  v[v.length - 1] !== '/' &&
  !v.includes('//') &&
  !v.includes('\0') &&
  // Only a path starting with a dot or holding `/.` can have a `.` or `..` segment.
  !((v[0] === '.' || v.includes('/.')) && DOT_SEGMENT.test(v));

function areStrings(v: unknown): boolean {
  if (!Array.isArray(v)) return false;
  for (const x of v) if (typeof x !== 'string') return false;
  return true;
}

function areFindings(v: unknown): boolean {
  if (!Array.isArray(v)) return false;
  for (const f of v) {
    if (!isObject(f)) return false;
    if (typeof f.path !== 'string' || typeof f.rule !== 'string' || typeof f.message !== 'string')
      return false;
    if (f.severity !== 'error' && f.severity !== 'warning') return false;
    if (f.line !== undefined && !(Number.isSafeInteger(f.line) && (f.line as number) > 0)) return false;
  }
  return true;
}

/**
 * Folder stamps (`files` false) or file stamps (`files` true): objects with a plain relative path ('' for the skill
 * folder). Their numbers need no check here: a load is reused only when each equals what lstat gives now
 * (`isUnchanged`), which no wrong type, NaN or made-up value does.
 */
function areStamps(v: unknown, files: boolean): boolean {
  if (!Array.isArray(v)) return false;
  for (const s of v) {
    if (!isObject(s)) return false;
    if ((files || s.path !== '') && !isRelPath(s.path)) return false;
  }
  return true;
}

const isRequests = (v: unknown): boolean =>
  isObject(v) &&
  typeof v.network === 'boolean' &&
  (v.workspace === 'none' || v.workspace === 'read' || v.workspace === 'write') &&
  areStrings(v.env) &&
  (v.sandboxProfile === undefined || typeof v.sandboxProfile === 'string') &&
  (v.timeoutMs === undefined || Number.isFinite(v.timeoutMs));

/** The frontmatter's name, as validation reads it (a number is a name too). */
export const frontmatterName = (fm: Record<string, unknown>): string | undefined =>
  typeof fm.name === 'string' || typeof fm.name === 'number' ? String(fm.name).trim() : undefined;

function isSkill(v: unknown): boolean {
  if (!isObject(v)) return false;
  const fm = v.frontmatter;
  if (!isObject(fm)) return false;
  if (v.name === undefined ? !frontmatterName(fm) : typeof v.name !== 'string' || v.name === '') return false;
  if (v.description === undefined ? typeof fm.description !== 'string' : typeof v.description !== 'string')
    return false;
  if (v.skillFile !== 'SKILL.md' && v.skillFile !== 'skill.md') return false;
  if (typeof v.skillFileSha256 !== 'string' || v.skillFileSha256.length !== 44) return false;
  if (!Number.isSafeInteger(v.bodyLine) || (v.bodyLine as number) < 1) return false;
  if (v.kind !== 'instruction' && v.kind !== 'executable') return false;
  if (v.entryPoint !== undefined && !isRelPath(v.entryPoint)) return false;
  if (v.inputSchema !== undefined && !isObject(v.inputSchema)) return false;
  if (v.allowedTools !== undefined && !areStrings(v.allowedTools)) return false;
  if (v.requests !== undefined && !isRequests(v.requests)) return false;
  if (v.warnings !== undefined && !areFindings(v.warnings)) return false;
  return areStamps(v.files, true);
}

/** True when `v` has the shape of `ListingStamps`: for each root, its own stamp, then its nested `skills/`'s. */
export function isListing(v: unknown): v is ListingStamps {
  if (!isObject(v) || !areStrings(v.roots) || !Array.isArray(v.folders)) return false;
  const folders = v.folders as unknown[];
  if (folders.length !== (v.roots as string[]).length) return false;
  for (const own of folders) {
    if (!areStamps(own, false) || (own as unknown[]).length === 0 || (own as unknown[]).length > 2)
      return false;
    const paths = (own as { path: string }[]).map((f) => f.path);
    if (paths[0] !== '' || (paths.length === 2 && paths[1] !== 'skills')) return false;
  }
  return true;
}

/** True when `v` is a record of the shape {@link CachedLoad} with a root in `roots`. */
export function isCachedLoad(v: unknown, roots: number): v is CachedLoad {
  if (!isObject(v)) return false;
  if (!Number.isSafeInteger(v.root) || (v.root as number) < 0 || (v.root as number) >= roots) return false;
  if (typeof v.folderName !== 'string' || v.folderName === '') return false;
  if (v.dir !== undefined && typeof v.dir !== 'string') return false;
  if (v.knownFile !== undefined && v.knownFile !== 'SKILL.md' && v.knownFile !== 'skill.md') return false;
  if (!areStamps(v.folders, false) || (v.folders as unknown[]).length === 0) return false;
  if (v.files !== undefined && !areStamps(v.files, true)) return false;
  if (v.findings !== undefined && !areFindings(v.findings)) return false;
  if (v.lint !== undefined && !areFindings(v.lint)) return false;
  return v.skill === undefined || isSkill(v.skill);
}
