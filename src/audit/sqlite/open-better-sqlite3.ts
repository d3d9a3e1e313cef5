import { createRequire } from 'node:module';
import { dirname } from 'node:path';
import type BetterSqlite3 from 'better-sqlite3';
import type { SqliteDb } from './sqlite-db.js';
import type { SqliteOpenOptions } from './open-node-sqlite.js';
import {
  BuiltForLaterNodeError,
  betterSqlite3BuiltFor,
  builtForLaterRelease,
} from './better-sqlite3-build.js';

type BetterSqlite3Module = typeof BetterSqlite3;

/** What loading better-sqlite3 gave: the module, or why it cannot be used in this Node. */
export type BetterSqlite3Load = { ok: true; module: BetterSqlite3Module } | { ok: false; error: Error };

/**
 * Loads better-sqlite3 and its native binding (`better_sqlite3.node`) now, so that a binding built for another
 * Node, or a missing one, shows here rather than on the first open — and one built against a later release of
 * this Node line is not loaded at all: it would load, then abort the process when a statement is collected.
 */
export function loadBetterSqlite3(): BetterSqlite3Load {
  try {
    const require = createRequire(import.meta.url);
    const built = betterSqlite3BuiltFor(dirname(require.resolve('better-sqlite3/package.json')));
    if (built !== undefined && builtForLaterRelease(built))
      return { ok: false, error: new BuiltForLaterNodeError(built) };
    const module = require('better-sqlite3') as BetterSqlite3Module;
    // The binding is loaded by the first `new Database`; an in-memory one costs nothing and proves it loads.
    new module(':memory:').close();
    return { ok: true, module };
  } catch (e) {
    return { ok: false, error: e as Error };
  }
}

/** Opens `path` with better-sqlite3, whose `Database` is the interface the audit code uses. */
export function openBetterSqlite3(
  module: BetterSqlite3Module,
  path: string,
  opts: SqliteOpenOptions,
): SqliteDb {
  const db = new module(path, {
    readonly: opts.readOnly,
    fileMustExist: opts.readOnly,
    timeout: opts.busyTimeoutMs,
  });
  return db as unknown as SqliteDb;
}
