import { chmod, readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';

/** Removes a bundle copy (or one being made); folders made read-only (older copies) are opened first. */
export async function removeSealedTree(path: string): Promise<void> {
  const open = async (p: string): Promise<void> => {
    try {
      await chmod(p, 0o755);
      const entries = await readdir(p, { withFileTypes: true });
      // Links are never followed: only real folders inside the tree are opened.
      for (const e of entries) if (e.isDirectory()) await open(join(p, e.name));
    } catch {
      // Gone already, or not a folder.
    }
  };
  await open(path);
  await rm(path, { recursive: true, force: true });
}
