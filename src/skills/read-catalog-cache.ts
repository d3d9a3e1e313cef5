import { createHash } from 'node:crypto';
import { closeSync, constants, fstatSync, openSync, readSync } from 'node:fs';
import { sep } from 'node:path';
import {
  DEFAULT_REQUESTS,
  frontmatterName,
  CATALOG_CACHE_FORMAT,
  CATALOG_CACHE_VERSION,
  MAX_CATALOG_CACHE_BYTES,
  isCachedLoad,
  isListing,
  type CacheHeader,
  type CachedLoad,
} from './catalog-cache-format.js';
import type { Listed } from './catalog.js';
import type { FolderLoad } from './folder-load.js';
import { toolNameFor } from './tool-name.js';
import type { Skill } from './types.js';

/** What a cache file must have been written for: this build, these roots. */
export interface CatalogCacheKey {
  build: string;
  roots: readonly string[];
}

/**
 * The folder loads a catalog cache file holds, by folder. Never throws: the map is empty when there is no file or
 * when the file cannot be trusted — not the user's own private regular file, over the size limit, foreign, from
 * another build or for other roots, truncated or altered (its digest), not JSON — and `problem` then says why. A
 * record of an unexpected shape is left out: its folder is read again.
 */
export function readCatalogCache(
  file: string,
  key: CatalogCacheKey,
): { loads: Map<string, FolderLoad>; listed?: Listed; problem?: string } {
  const loads = new Map<string, FolderLoad>();
  const none = (problem?: string) => (problem === undefined ? { loads } : { loads, problem });
  let payload: unknown;
  try {
    const bytes = readPrivateFile(file);
    if (bytes === undefined || typeof bytes === 'string') return none(bytes);
    const nl = bytes.indexOf(0x0a);
    if (nl === -1) return none('no header line');
    const header = JSON.parse(bytes.subarray(0, nl).toString('utf8')) as Partial<CacheHeader> | null;
    if (header?.format !== CATALOG_CACHE_FORMAT) return none('not a catalog cache');
    if (header.version !== CATALOG_CACHE_VERSION) return none('another version of the format');
    if (header.build !== key.build) return none('written by another build');
    if (!Array.isArray(header.roots) || !sameList(header.roots, key.roots))
      return none('written for other roots');
    const body = bytes.subarray(nl + 1);
    if (body.length !== header.bytes) return none('truncated or extended');
    if (createHash('sha256').update(body).digest('base64') !== header.sha256) return none('digest mismatch');
    payload = JSON.parse(body.toString('utf8'));
  } catch (err) {
    return none(`unreadable: ${(err as Error).message}`);
  }
  const p = payload as { roots?: unknown; loads?: unknown; listing?: unknown } | null;
  if (p === null || typeof p !== 'object' || !Array.isArray(p.roots) || !Array.isArray(p.loads))
    return none('no roots and loads');
  const roots = p.roots as unknown[];
  if (!roots.every((r) => typeof r === 'string' && r !== '')) return none('bad roots');
  const records = p.loads as unknown[];
  // Whether each folder is where a discovery that met no symlink finds one: a plain folder of a root or of its
  // skills/ folder, or the root itself (a skills folder that is a skill).
  let plain = true;
  for (const r of records) {
    if (!isCachedLoad(r, roots.length)) continue;
    const load = toLoad(r, roots as string[]);
    loads.set(load.dir, load);
    if (plain) plain = isPlainFolder(load, r.dir === undefined);
  }
  // The discovery's candidates are the loads, in order: only when none was left out (or two shared a folder).
  if (!plain || p.listing === undefined || loads.size !== records.length || !isListing(p.listing))
    return { loads };
  const listedRoots = new Set(p.listing.roots);
  const listed = [...loads.values()];
  if (!listed.every((l) => listedRoots.has(l.root))) return { loads };
  return { loads, listed: { stamps: p.listing, loads: listed } };
}

/**
 * True for `<root>/<name>` (`derived`: the record gave no other folder) or `<root>/skills/<name>`, with `name` a
 * folder discovery lists, or for the root itself.
 */
function isPlainFolder(l: FolderLoad, derived: boolean): boolean {
  if (!derived && l.dir === l.root) return l.knownFile !== undefined;
  const name = l.folderName;
  if (name.includes(sep) || name.includes('/') || name.startsWith('.') || name === 'node_modules')
    return false;
  return derived || l.dir === `${l.root}${sep}skills${sep}${name}`;
}

/**
 * The file's bytes; undefined when there is none; a reason when it is not a regular file of this user that no one
 * else may write, or is too large. A symlink is not followed.
 */
function readPrivateFile(file: string): Buffer | string | undefined {
  let fd: number;
  try {
    fd = openSync(file, constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    return `cannot open it: ${(err as Error).message}`;
  }
  try {
    const st = fstatSync(fd);
    if (!st.isFile()) return 'not a regular file';
    const uid = process.getuid?.();
    if (uid !== undefined && st.uid !== uid) return 'owned by another user';
    if ((st.mode & 0o022) !== 0) return 'writable by others';
    if (st.size > MAX_CATALOG_CACHE_BYTES) return 'over the size limit';
    const bytes = Buffer.allocUnsafe(st.size);
    let off = 0;
    for (let n = 1; off < bytes.length && n > 0; off += n)
      n = readSync(fd, bytes, off, bytes.length - off, off);
    return bytes.subarray(0, off);
  } finally {
    closeSync(fd);
  }
}

const sameList = (a: readonly unknown[], b: readonly string[]) =>
  a.length === b.length && a.every((x, i) => x === b[i]);

/** Shared by every load that has none (frozen: nothing changes a loaded skill's findings). */
const NONE = Object.freeze([]) as unknown as never[];

/**
 * A record as the load it was made from (see `writeCatalogCache`). The parsed stamps, files and frontmatter become
 * the load's own; the skill is made in one piece, its fields in the order a load gives them (adding them one by one
 * to the parsed object cost each skill a hidden-class change per field and a grown property store).
 */
function toLoad(r: CachedLoad, roots: readonly string[]): FolderLoad {
  const root = roots[r.root]!;
  const dir = r.dir ?? `${root}${sep}${r.folderName}`;
  const s = r.skill;
  if (s === undefined) {
    const load: FolderLoad = {
      dir,
      root,
      folderName: r.folderName,
      findings: r.findings ?? NONE,
      lint: r.lint ?? NONE,
      stamps: { folders: r.folders, files: r.files ?? NONE },
    };
    if (r.knownFile !== undefined) load.knownFile = r.knownFile;
    return load;
  }
  const name = s.name ?? frontmatterName(s.frontmatter)!;
  const warnings = s.warnings ?? NONE;
  const skill: Skill = {
    name,
    toolName: toolNameFor(name),
    description: s.description ?? String(s.frontmatter.description).trim(),
    dir,
    root,
    skillFile: s.skillFile,
    skillFileSha256: s.skillFileSha256,
    bodyLine: s.bodyLine,
    frontmatter: s.frontmatter,
    kind: s.kind,
    allowedTools: s.allowedTools ?? NONE,
    requests: s.requests ?? DEFAULT_REQUESTS,
    files: s.files,
    warnings,
  };
  if (s.entryPoint !== undefined) skill.entryPoint = s.entryPoint;
  if (s.inputSchema !== undefined) skill.inputSchema = s.inputSchema;
  const load: FolderLoad = {
    dir,
    root,
    folderName: r.folderName,
    skill,
    findings: warnings,
    lint: r.lint ?? NONE,
    stamps: { folders: r.folders, files: s.files },
  };
  if (r.knownFile !== undefined) load.knownFile = r.knownFile;
  return load;
}
