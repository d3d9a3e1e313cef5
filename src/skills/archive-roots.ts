import { readdirSync, realpathSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { ARCHIVE_EXTENSIONS, extractArchive } from './extract-archive.js';
import { ZipRefused } from './read-zip.js';
import type { Finding } from './types.js';

export interface ArchiveRoots {
  /** The extracted archives' roots, to serve after the folders they were found in. */
  roots: string[];
  /** One error per archive refused, naming the entry when the problem is one entry's. */
  findings: Finding[];
}

/**
 * The `.skill` / `.zip` files directly in each skills root, each extracted (verified, read-only) under `archives` and
 * given as a root of its own. An archive that is refused is a finding, never served.
 */
export function archiveRoots(roots: readonly string[], archives: string): ArchiveRoots {
  const out: ArchiveRoots = { roots: [], findings: [] };
  for (const r of roots) {
    let entries;
    try {
      entries = readdirSync(realpathSync(resolve(r)), { withFileTypes: true });
    } catch {
      continue; // a missing root is reported by discovery
    }
    entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const e of entries) {
      const lower = e.name.toLowerCase();
      if (e.name.startsWith('.') || !ARCHIVE_EXTENSIONS.some((x) => lower.endsWith(x))) continue;
      const path = join(realpathSync(resolve(r)), e.name);
      if (!e.isFile()) {
        out.findings.push(refused(path, 'not a regular file (links to archives are not followed)'));
        continue;
      }
      try {
        out.roots.push(extractArchive(path, archives).root);
      } catch (err) {
        if (!(err instanceof ZipRefused)) throw err;
        out.findings.push(refused(path, err.message));
      }
    }
  }
  return out;
}

const refused = (path: string, why: string): Finding => ({
  path,
  rule: 'archive-refused',
  severity: 'error',
  message: `skill archive not served: ${why}`,
});
