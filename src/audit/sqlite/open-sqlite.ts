import { existsSync } from 'node:fs';
import { SkillsError } from '../../errors.js';
import { explainLoadFailure, nodeHasSqlite } from './explain-load-failure.js';
import { type BetterSqlite3Load, loadBetterSqlite3, openBetterSqlite3 } from './open-better-sqlite3.js';
import {
  type NodeSqlite,
  type SqliteOpenOptions,
  loadNodeSqlite,
  openNodeSqlite,
} from './open-node-sqlite.js';
import type { SqliteDb, SqliteDriver, SqliteDriverChoice } from './sqlite-db.js';

export interface OpenSqliteOptions {
  /** Open for reading only; the file must exist. Default false. */
  readOnly?: boolean;
  /** How long a statement waits for another connection's lock (default 10 000 ms). */
  busyTimeoutMs?: number;
  /** Which binding (default `auto`: better-sqlite3 when it loads, else node:sqlite). */
  driver?: SqliteDriverChoice;
}

/** A connection and the driver that opened it. */
export interface OpenedSqlite {
  db: SqliteDb;
  driver: SqliteDriver;
}

// Each binding is loaded once per process (thread), on first use: nothing is loaded at import time.
let better: BetterSqlite3Load | undefined;
let builtIn: { module: NodeSqlite | undefined } | undefined;
const betterSqlite3 = () => (better ??= loadBetterSqlite3());
const nodeSqlite = () => (builtIn ??= { module: loadNodeSqlite() }).module;

/**
 * Opens the SQLite file at `path` with the chosen driver. A driver that cannot load here fails with
 * `AUDIT_FAILED`, naming the module, the Node ABI it was built for and this Node's, and the fix.
 */
export function openSqlite(path: string, options: OpenSqliteOptions = {}): OpenedSqlite {
  const opts: SqliteOpenOptions = {
    readOnly: options.readOnly ?? false,
    busyTimeoutMs: options.busyTimeoutMs ?? 10_000,
  };
  const driver = pickDriver(options.driver ?? 'auto');
  if (opts.readOnly && !existsSync(path))
    throw new Error(`unable to open database file: ${path} does not exist`);
  if (driver === 'node') return { db: openNodeSqlite(nodeSqlite()!, path, opts), driver };
  const loaded = betterSqlite3();
  if (!loaded.ok) throw unavailable(loaded.error);
  return { db: openBetterSqlite3(loaded.module, path, opts), driver };
}

function pickDriver(choice: SqliteDriverChoice): SqliteDriver {
  if (choice === 'node') {
    if (nodeSqlite() !== undefined) return 'node';
    throw new SkillsError('AUDIT_FAILED', `node:sqlite is not available in Node ${process.version}`, {
      hint: nodeHasSqlite()
        ? 'This Node was built without SQLite: use audit_sqlite_driver: better-sqlite3.'
        : 'It needs Node 22.13 or later; on this Node use audit_sqlite_driver: better-sqlite3 (or auto).',
    });
  }
  if (choice === 'better-sqlite3') return choice;
  const loaded = betterSqlite3();
  if (loaded.ok) return 'better-sqlite3';
  if (nodeSqlite() !== undefined) return 'node';
  throw unavailable(loaded.error);
}

function unavailable(error: Error): SkillsError {
  const { message, hint } = explainLoadFailure(error);
  return new SkillsError('AUDIT_FAILED', message, { hint, cause: error });
}
