import { openSqlite } from '../../src/audit/sqlite/open-sqlite.js';
import type { SqliteDb } from '../../src/audit/sqlite/sqlite-db.js';

/**
 * What `import Database from 'better-sqlite3'` gives the tests when they run on node:sqlite
 * (SKILLS_MCP_AUDIT_SQLITE_DRIVER=node, see vitest.config.ts): the same calls, on the built-in driver, so that the
 * files a test opens, edits or tampers with are opened the way the server under test opens them.
 */
export default function Database(path: string, options: { readonly?: boolean } = {}): SqliteDb {
  return openSqlite(path, { driver: 'node', readOnly: options.readonly === true }).db;
}
