import type { SqliteTransaction } from './sqlite-db.js';

/**
 * better-sqlite3's `db.transaction(fn)` for a driver without one: BEGIN (DEFERRED, IMMEDIATE or EXCLUSIVE) and
 * COMMIT around `fn`, ROLLBACK when it throws; inside an open transaction a SAVEPOINT instead, released or rolled
 * back alone. `depth` is the connection's count of open levels, shared by all its transactions.
 */
export function makeTransaction<A extends unknown[], R>(
  exec: (sql: string) => void,
  depth: { n: number },
  fn: (...args: A) => R,
): SqliteTransaction<A, R> {
  const run =
    (mode: 'DEFERRED' | 'IMMEDIATE' | 'EXCLUSIVE') =>
    (...args: A): R => {
      const nested = depth.n > 0;
      const name = `sp${depth.n}`;
      exec(nested ? `SAVEPOINT ${name}` : `BEGIN ${mode}`);
      depth.n++;
      let result: R;
      try {
        result = fn(...args);
      } catch (e) {
        depth.n--;
        rollback(exec, nested ? `ROLLBACK TO ${name}; RELEASE ${name}` : 'ROLLBACK');
        throw e;
      }
      depth.n--;
      try {
        exec(nested ? `RELEASE ${name}` : 'COMMIT');
      } catch (e) {
        // A failed COMMIT (SQLITE_BUSY, a full disk) leaves the transaction open: end it, keep the error.
        if (!nested) rollback(exec, 'ROLLBACK');
        throw e;
      }
      return result;
    };
  const deferred = run('DEFERRED');
  return Object.assign((...args: A) => deferred(...args), {
    deferred,
    immediate: run('IMMEDIATE'),
    exclusive: run('EXCLUSIVE'),
  });
}

/** SQLite may have rolled the transaction back itself (an I/O error, a full disk): nothing left to undo then. */
function rollback(exec: (sql: string) => void, sql: string): void {
  try {
    exec(sql);
  } catch {
    // no transaction open any more
  }
}
