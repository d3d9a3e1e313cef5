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
}

// The checks below run over every record at every start (tens of thousands of objects with 10,000 skills). They
// check in place: zod, which the rest of the server uses at its edges, builds a copy of every object it parses,
// which took ~160 ms and doubled the records' memory at 10,000 skills.

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);
const isString = (v: unknown): v is string => typeof v === 'string';
const isTime = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v);
const isCount = (v: unknown): v is number => Number.isSafeInteger(v) && (v as number) >= 0;
const isOptional = (v: unknown, check: (x: unknown) => boolean) => v === undefined || check(v);
function isArrayOf(v: unknown, check: (x: unknown) => boolean): boolean {
  if (!Array.isArray(v)) return false;
  for (const x of v) if (!check(x)) return false;
  return true;
}
const isSkillFileName = (v: unknown) => v === 'SKILL.md' || v === 'skill.md';

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
  !DOT_SEGMENT.test(v);

const isFinding = (v: unknown): boolean =>
  isObject(v) &&
  isString(v.path) &&
  isOptional(v.line, (l) => Number.isSafeInteger(l) && (l as number) > 0) &&
  isString(v.rule) &&
  (v.severity === 'error' || v.severity === 'warning') &&
  isString(v.message);

const isFile = (v: unknown): boolean =>
  isObject(v) &&
  isRelPath(v.path) &&
  isCount(v.size) &&
  isCount(v.mode) &&
  (v.mode) <= 0o777 &&
  isTime(v.mtimeMs) &&
  isTime(v.ctimeMs) &&
  isCount(v.ino);

const isFolder = (v: unknown): boolean =>
  isObject(v) &&
  (v.path === '' || isRelPath(v.path)) &&
  isTime(v.mtimeMs) &&
  isTime(v.ctimeMs) &&
  isCount(v.ino);

const isRequests = (v: unknown): boolean =>
  isObject(v) &&
  typeof v.network === 'boolean' &&
  (v.workspace === 'none' || v.workspace === 'read' || v.workspace === 'write') &&
  isArrayOf(v.env, isString) &&
  isOptional(v.sandboxProfile, isString) &&
  isOptional(v.timeoutMs, isTime);

/** The frontmatter's name, as validation reads it (a number is a name too). */
export const frontmatterName = (fm: Record<string, unknown>): string | undefined =>
  typeof fm.name === 'string' || typeof fm.name === 'number' ? String(fm.name).trim() : undefined;

const isSkill = (v: unknown): boolean =>
  isObject(v) &&
  isObject(v.frontmatter) &&
  (v.name === undefined
    ? (frontmatterName(v.frontmatter) ?? '') !== ''
    : isString(v.name) && v.name !== '') &&
  (v.description === undefined
    ? isObject(v.frontmatter) && isString(v.frontmatter.description)
    : isString(v.description)) &&
  isSkillFileName(v.skillFile) &&
  isString(v.skillFileSha256) &&
  v.skillFileSha256.length === 44 &&
  Number.isSafeInteger(v.bodyLine) &&
  (v.bodyLine as number) > 0 &&
  (v.kind === 'instruction' || v.kind === 'executable') &&
  isOptional(v.entryPoint, isRelPath) &&
  isOptional(v.inputSchema, isObject) &&
  isOptional(v.allowedTools, (a) => isArrayOf(a, isString)) &&
  isOptional(v.requests, isRequests) &&
  isArrayOf(v.files, isFile) &&
  isOptional(v.warnings, (w) => isArrayOf(w, isFinding));

/** True when `v` is a record of the shape {@link CachedLoad} with a root in `roots`. */
export const isCachedLoad = (v: unknown, roots: number): v is CachedLoad =>
  isObject(v) &&
  Number.isSafeInteger(v.root) &&
  (v.root as number) >= 0 &&
  (v.root as number) < roots &&
  isString(v.folderName) &&
  v.folderName !== '' &&
  isOptional(v.dir, isString) &&
  isOptional(v.knownFile, isSkillFileName) &&
  isArrayOf(v.folders, isFolder) &&
  (v.folders as unknown[]).length > 0 &&
  isOptional(v.files, (f) => isArrayOf(f, isFile)) &&
  isOptional(v.skill, isSkill) &&
  isOptional(v.findings, (f) => isArrayOf(f, isFinding)) &&
  isOptional(v.lint, (f) => isArrayOf(f, isFinding));
