import { createRequire } from 'node:module';
import { makeTransaction } from './make-transaction.js';
import type { SqliteDb, SqliteStatement, SqliteValue } from './sqlite-db.js';

export interface SqliteOpenOptions {
  readOnly: boolean;
  /** How long a statement waits for another connection's lock, in ms. */
  busyTimeoutMs: number;
}

/** The part of `node:sqlite` used here (this package's Node types are Node 20's, which has no `node:sqlite`). */
interface StatementSync {
  run(...params: SqliteValue[]): { changes: number | bigint; lastInsertRowid: number | bigint };
  get(...params: SqliteValue[]): unknown;
  all(...params: SqliteValue[]): unknown[];
  iterate(...params: SqliteValue[]): IterableIterator<unknown>;
  setReadBigInts(enabled: boolean): void;
}
interface DatabaseSync {
  exec(sql: string): void;
  prepare(sql: string): StatementSync;
  close(): void;
}
export interface NodeSqlite {
  DatabaseSync: new (path: string, options: { readOnly: boolean }) => DatabaseSync;
}

/** `node:sqlite` when this Node has it (22.13+ without a flag), else undefined. Loaded on first use. */
export function loadNodeSqlite(): NodeSqlite | undefined {
  const require = createRequire(import.meta.url);
  // Some Node lines print "ExperimentalWarning: SQLite is an experimental feature" on load: that one warning,
  // while loading it, is not news to the person running the server. Every other warning passes.
  const emit = process.emitWarning.bind(process) as (...args: unknown[]) => void;
  const original = Object.getOwnPropertyDescriptor(process, 'emitWarning');
  process.emitWarning = (warning: string | Error, ...rest: unknown[]) => {
    const type = typeof rest[0] === 'string' ? rest[0] : (rest[0] as { type?: string } | undefined)?.type;
    const text = typeof warning === 'string' ? warning : warning.message;
    if (type === 'ExperimentalWarning' && /\bSQLite\b/.test(text)) return;
    emit(warning, ...rest);
  };
  try {
    return require('node:sqlite') as NodeSqlite;
  } catch {
    return undefined;
  } finally {
    if (original === undefined) Reflect.deleteProperty(process, 'emitWarning');
    else Object.defineProperty(process, 'emitWarning', original);
  }
}

/** Opens `path` with `node:sqlite` (`DatabaseSync`) behind the interface the audit code uses. */
export function openNodeSqlite(sqlite: NodeSqlite, path: string, opts: SqliteOpenOptions): SqliteDb {
  const db = new sqlite.DatabaseSync(path, { readOnly: opts.readOnly });
  let open = true;
  try {
    db.exec(`PRAGMA busy_timeout = ${Math.max(0, Math.trunc(opts.busyTimeoutMs))}`);
  } catch (e) {
    db.close();
    throw e;
  }
  const depth = { n: 0 };
  const exec = (sql: string) => db.exec(sql);
  return {
    get open() {
      return open;
    },
    prepare: (sql) => wrapStatement(db.prepare(sql)),
    exec,
    pragma: (sql, options) => pragma(db, sql, options?.simple === true),
    transaction: (fn) => makeTransaction(exec, depth, fn),
    close: () => {
      if (!open) return;
      open = false;
      db.close();
    },
  };
}

function wrapStatement(s: StatementSync): SqliteStatement {
  // Integers come back as numbers (an integer past 2^53 throws rather than losing digits), as better-sqlite3 does.
  s.setReadBigInts(false);
  return {
    run: (...p: SqliteValue[]) => s.run(...p),
    get: (...p: SqliteValue[]) => plain(s.get(...p)),
    all: (...p: SqliteValue[]) => s.all(...p).map(plain),
    iterate: function* (...p: SqliteValue[]) {
      for (const row of s.iterate(...p)) yield plain(row);
    },
  };
}

/** node:sqlite's rows have no prototype; the rest of the code (and its tests) expects plain objects. */
const plain = (row: unknown): unknown => (row === undefined ? undefined : { ...(row as object) });

function pragma(db: DatabaseSync, sql: string, simple: boolean): unknown {
  const rows = db.prepare(`PRAGMA ${sql}`).all();
  if (!simple) return rows.map(plain);
  const first = rows[0] as object | undefined;
  return first === undefined ? undefined : Object.values(first)[0];
}
