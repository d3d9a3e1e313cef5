import { join } from 'node:path';
import { tempDir as freshDir } from '../../helpers/temp-dir.js';

/** The shared temp folder helper, with where an audit log in it goes (`state/audit.db`, not yet made). */
export function tempDir(prefix = 'skills-mcp-audit-'): { dir: string; dbPath: string; cleanup: () => void } {
  const t = freshDir(prefix);
  return { ...t, dbPath: join(t.dir, 'state', 'audit.db') };
}
