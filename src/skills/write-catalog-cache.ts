import { createHash, randomBytes } from 'node:crypto';
import { chmodSync, mkdirSync, readdirSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { basename, dirname, join, sep } from 'node:path';
import type { Catalog } from './catalog.js';
import {
  frontmatterName,
  CATALOG_CACHE_FORMAT,
  CATALOG_CACHE_VERSION,
  MAX_CATALOG_CACHE_BYTES,
  isCachedLoad,
  type CacheHeader,
  type CachedLoad,
  type CachedSkill,
  type CachePayload,
} from './catalog-cache-format.js';
import type { FolderLoad } from './folder-load.js';
import type { Skill } from './types.js';
import type { CatalogCacheKey } from './read-catalog-cache.js';

/** Cache files kept in the folder (one per set of roots served); the least recently written go first. */
const MAX_CACHE_FILES = 8;

/**
 * Writes the catalog's stamped folder loads (never a skill's instructions: those are read from its skill file when
 * needed) to `file`, private (0600 in a 0700 folder), through a temporary file renamed into place: a crash while
 * writing leaves the previous file or none, never a partial one under the name (and the reader checks the digest
 * of what it reads). Loads a cache could not give back exactly are left out. Returns how many were written;
 * throws what the file system throws.
 */
export function writeCatalogCache(file: string, key: CatalogCacheKey, catalog: Catalog): number {
  const roots: string[] = [];
  const loads: CachedLoad[] = [];
  for (const f of catalog.folders) {
    let root = roots.indexOf(f.root);
    if (root === -1) root = roots.push(f.root) - 1;
    const r = toRecord(f, root);
    if (r !== undefined) loads.push(r);
  }
  // The discovery stands for every folder only when each has its record.
  const payload: CachePayload =
    catalog.listing !== undefined && loads.length === catalog.folders.length
      ? { roots, loads, listing: catalog.listing }
      : { roots, loads };
  const body = Buffer.from(JSON.stringify(payload), 'utf8');
  if (body.length > MAX_CATALOG_CACHE_BYTES) return 0;
  const header: CacheHeader = {
    format: CATALOG_CACHE_FORMAT,
    version: CATALOG_CACHE_VERSION,
    build: key.build,
    roots: [...key.roots],
    bytes: body.length,
    sha256: createHash('sha256').update(body).digest('base64'),
  };
  const dir = dirname(file);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  chmodSync(dir, 0o700);
  const tmp = join(dir, `.${basename(file)}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`);
  try {
    writeFileSync(tmp, Buffer.concat([Buffer.from(`${JSON.stringify(header)}\n`), body]), {
      mode: 0o600,
      flag: 'wx',
    });
    renameSync(tmp, file);
  } finally {
    rmSync(tmp, { force: true });
  }
  pruneOthers(dir, file);
  return loads.length;
}

/** A stamped load as a record, or undefined when a cache could not give it back exactly as it is. */
function toRecord(f: FolderLoad, root: number): CachedLoad | undefined {
  if (f.stamps === undefined) return undefined;
  const where = {
    root,
    folderName: f.folderName,
    ...(f.dir === `${f.root}${sep}${f.folderName}` ? {} : { dir: f.dir }),
    ...(f.knownFile === undefined ? {} : { knownFile: f.knownFile as 'SKILL.md' | 'skill.md' }),
    folders: f.stamps.folders,
  };
  const lint = f.lint.length === 0 ? {} : { lint: f.lint };
  let record: CachedLoad;
  if (f.skill === undefined) {
    const findings = f.findings.length === 0 ? {} : { findings: f.findings };
    record = { ...where, files: f.stamps.files, ...findings, ...lint };
  } else {
    const k = f.skill;
    const fm = k.frontmatter;
    // The frontmatter came from YAML: a value JSON cannot carry (-0, Infinity, NaN…) would come back different.
    if (!isJson(fm)) return undefined;
    const skill: CachedSkill = {
      skillFile: k.skillFile,
      skillFileSha256: k.skillFileSha256,
      bodyLine: k.bodyLine,
      frontmatter: fm,
      kind: k.kind,
      files: k.files,
    };
    if (frontmatterName(fm) !== k.name) skill.name = k.name;
    if (typeof fm.description !== 'string' || fm.description.trim() !== k.description)
      skill.description = k.description;
    if (k.entryPoint !== undefined) skill.entryPoint = k.entryPoint;
    if (k.inputSchema !== undefined) skill.inputSchema = k.inputSchema;
    if (k.allowedTools.length > 0) skill.allowedTools = k.allowedTools;
    if (!isDefaultRequests(k.requests)) skill.requests = k.requests;
    if (k.warnings.length > 0) skill.warnings = k.warnings;
    record = { ...where, skill, ...lint };
  }
  // A record the reader would leave out is not written: that folder is read again at each start instead.
  return isCachedLoad(record, root + 1) ? record : undefined;
}

const isDefaultRequests = (r: Skill['requests']) =>
  !r.network && r.workspace === 'read' && r.env.length === 0 && Object.keys(r).length === 3;

/** True for a value that JSON.stringify and JSON.parse give back equal. */
function isJson(v: unknown): boolean {
  if (v === null || typeof v === 'string' || typeof v === 'boolean') return true;
  if (typeof v === 'number') return Number.isFinite(v) && !Object.is(v, -0);
  if (Array.isArray(v)) return v.every(isJson);
  if (typeof v !== 'object') return false;
  const proto = Object.getPrototypeOf(v) as unknown;
  if (proto !== Object.prototype && proto !== null) return false;
  for (const [k, x] of Object.entries(v)) if (k === '__proto__' || !isJson(x)) return false;
  return true;
}

/**
 * Keeps the folder to the newest {@link MAX_CACHE_FILES} cache files, and removes temporary files a crashed writer
 * left (older than an hour).
 */
function pruneOthers(dir: string, keep: string): void {
  const now = Date.now();
  const entries = readdirSync(dir)
    .map((n) => ({ n, p: join(dir, n) }))
    .filter((e) => e.p !== keep)
    .map((e) => ({ ...e, t: statSync(e.p, { throwIfNoEntry: false })?.mtimeMs ?? 0 }));
  for (const e of entries) if (e.n.endsWith('.tmp') && now - e.t > 3_600_000) rmSync(e.p, { force: true });
  const caches = entries.filter((e) => e.n.endsWith('.json')).sort((a, b) => b.t - a.t);
  for (const e of caches.slice(MAX_CACHE_FILES - 1)) rmSync(e.p, { force: true });
}
