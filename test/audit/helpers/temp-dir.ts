import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** A fresh real folder under the OS temp dir, and a function that removes it. */
export function tempDir(prefix = 'skills-mcp-audit-'): { dir: string; dbPath: string; cleanup: () => void } {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  return {
    dir,
    dbPath: join(dir, 'state', 'audit.db'),
    cleanup: () => rmSync(dir, { recursive: true, force: true }),
  };
}
