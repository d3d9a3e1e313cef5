import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { canonicalJson } from '../canonical-json.js';
import { listSkillFiles, type FolderLink } from './list-skill-files.js';

export interface BundleEntry {
  path: string;
  sha256: string;
  mode: number;
}

export interface Bundle {
  /** sha256 of the canonical JSON list of entries: binds approvals to content. */
  sha256: string;
  entries: BundleEntry[];
  /**
   * Links to folders inside the skill when it was hashed: other names of the files under them (not hashed: the
   * copy holds each file at its real path only).
   */
  folderLinks?: FolderLink[];
}

const sha256 = (data: Uint8Array | string): string => createHash('sha256').update(data).digest('hex');

/**
 * Hashes a skill folder as it is on disk now (the files are listed again, so an added or removed file changes the
 * hash). `bundle_sha256` = sha256 of canonical JSON `[{path, sha256, mode}]`, sorted by POSIX path.
 * Synchronous like the listing: a bundle is a few small files, read twice per call (binding, then just before the
 * spawn), and a thread-pool round trip per file would cost more than the reads.
 */
export function hashBundle(dir: string): Bundle {
  const { files, folderLinks } = listSkillFiles(dir);
  const entries = files.map((f) => ({
    path: f.path,
    sha256: sha256(readFileSync(join(dir, f.path))),
    mode: f.mode,
  }));
  return { sha256: sha256(canonicalJson(entries)), entries, folderLinks };
}
