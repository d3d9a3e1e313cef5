import { cpSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { removeTree } from '../../src/envs/env-store.js';

/**
 * A fresh temp folder; call the returned cleanup in afterEach/afterAll. Cleanup also removes what the server sealed
 * read-only inside it (bundle copies, environments), which an ordinary user could not otherwise delete.
 */
export function tempDir(prefix = 'skills-mcp-test-'): { dir: string; cleanup: () => void } {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  return { dir, cleanup: () => removeTree(dir) };
}

/** Copies the bundled example skills into a temp folder (tests may edit the copy). */
export function copyBundledSkills(): { dir: string; cleanup: () => void } {
  const t = tempDir();
  const dir = join(t.dir, 'skills');
  cpSync(join(import.meta.dirname, '..', '..', 'skills'), dir, { recursive: true });
  return { dir, cleanup: t.cleanup };
}

export const repoRoot = join(import.meta.dirname, '..', '..');
export const builtCli = join(repoRoot, 'dist', 'cli.js');
