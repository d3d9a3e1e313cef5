import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { canonicalJson } from '../canonical-json.js';
import { listSkillFiles } from './list-skill-files.js';

export interface BundleEntry {
  path: string;
  sha256: string;
  mode: number;
}

export interface Bundle {
  /** sha256 of the canonical JSON list of entries: binds approvals to content. */
  sha256: string;
  entries: BundleEntry[];
}

const sha256 = (data: Uint8Array | string): string => createHash('sha256').update(data).digest('hex');

/**
 * Hashes a skill folder as it is on disk now (the files are listed again, so an added or removed file changes the
 * hash). `bundle_sha256` = sha256 of canonical JSON `[{path, sha256, mode}]`, sorted by POSIX path.
 */
export async function hashBundle(dir: string): Promise<Bundle> {
  const { files } = listSkillFiles(dir);
  const entries = await Promise.all(
    files.map(async (f) => ({
      path: f.path,
      sha256: sha256(await readFile(join(dir, f.path))),
      mode: f.mode,
    })),
  );
  return { sha256: sha256(canonicalJson(entries)), entries };
}
