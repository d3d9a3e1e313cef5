/** The parameters a statement takes: by position only (both drivers bind them the same way). */
export type SqliteValue = string | number | bigint | null | Uint8Array;

/** A prepared statement: the part of better-sqlite3's `Statement` the audit code uses. */
export interface SqliteStatement {
  run(...params: SqliteValue[]): { changes: number | bigint; lastInsertRowid: number | bigint };
  get(...params: SqliteValue[]): unknown;
  all(...params: SqliteValue[]): unknown[];
  iterate(...params: SqliteValue[]): IterableIterator<unknown>;
}

/** `db.transaction(fn)`: calling it runs `fn` in a transaction (a SAVEPOINT when one is open already). */
export interface SqliteTransaction<A extends unknown[], R> {
  (...args: A): R;
  deferred(...args: A): R;
  immediate(...args: A): R;
  exclusive(...args: A): R;
}

/** One SQLite connection, whichever driver opened it (`openSqlite`). */
export interface SqliteDb {
  readonly open: boolean;
  prepare(sql: string): SqliteStatement;
  exec(sql: string): void;
  /** `PRAGMA <sql>`: its rows, or with `simple` the first column of the first row. */
  pragma(sql: string, options?: { simple?: boolean }): unknown;
  transaction<A extends unknown[], R>(fn: (...args: A) => R): SqliteTransaction<A, R>;
  close(): void;
}

/** Which SQLite binding opens the audit log. */
export type SqliteDriver = 'better-sqlite3' | 'node';

/** The setting: a driver, or `auto` (better-sqlite3 when it loads, else `node:sqlite` when this Node has it). */
export type SqliteDriverChoice = SqliteDriver | 'auto';
