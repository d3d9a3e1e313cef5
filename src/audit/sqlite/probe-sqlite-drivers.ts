import { explainLoadFailure } from './explain-load-failure.js';
import { type BetterSqlite3Load, loadBetterSqlite3 } from './open-better-sqlite3.js';
import { loadNodeSqlite } from './open-node-sqlite.js';
import type { SqliteDriver } from './sqlite-db.js';

/** Which SQLite binding `audit_sqlite_driver: auto` opens an audit log with in this Node, and why. */
export interface SqliteDriversProbe {
  /** The binding auto picks: better-sqlite3 when it loads, else node:sqlite; undefined when neither is here. */
  auto: SqliteDriver | undefined;
  /** Whether better-sqlite3's native module loads in this Node; if not, why and the fix. */
  betterSqlite3: { loads: true } | { loads: false; message: string; hint: string };
  /** Whether this Node has node:sqlite (22.13 and later). */
  nodeSqlite: boolean;
}

/** How the bindings are loaded (a test may pass others); of node:sqlite only whether it loads counts here. */
export interface SqliteLoaders {
  loadBetterSqlite3?: () => BetterSqlite3Load;
  loadNodeSqlite?: () => object | undefined;
}

/** Loads each binding once now, as the first audit open would, and says which one auto opens the log with. */
export function probeSqliteDrivers(loaders: SqliteLoaders = {}): SqliteDriversProbe {
  const better = (loaders.loadBetterSqlite3 ?? loadBetterSqlite3)();
  const nodeSqlite = (loaders.loadNodeSqlite ?? loadNodeSqlite)() !== undefined;
  return {
    auto: better.ok ? 'better-sqlite3' : nodeSqlite ? 'node' : undefined,
    betterSqlite3: better.ok ? { loads: true } : { loads: false, ...explainLoadFailure(better.error) },
    nodeSqlite,
  };
}
