import { MIGRATIONS, schemaVersion } from './migrate.js';
import type { SqliteDb } from './sqlite/sqlite-db.js';
import { openSqlite } from './sqlite/open-sqlite.js';

type Triggers = Map<string, string>;

const triggersOf = (db: SqliteDb): Triggers =>
  new Map(
    (
      db.prepare("SELECT name, sql FROM sqlite_master WHERE type = 'trigger'").all() as {
        name: string;
        sql: string;
      }[]
    ).map((t) => [t.name, t.sql]),
  );

/** Per schema version, the triggers its migrations leave (built once, in memory). */
const expected = new Map<number, Triggers>();

function expectedTriggers(version: number): Triggers {
  let t = expected.get(version);
  if (t === undefined) {
    const { db } = openSqlite(':memory:');
    try {
      for (const m of MIGRATIONS) if (m.version <= version) db.exec(m.sql);
      t = triggersOf(db);
    } finally {
      db.close();
    }
    expected.set(version, t);
  }
  return t;
}

/**
 * What is wrong with the triggers that keep the log append-only (events, writer marks, checkpoints): one removed,
 * replaced or added by a writer of the database. SQLite lets any writer drop a trigger; the chain, the anchors and
 * the checkpoints still show what was done to the rows, but from then on nothing refuses it. [] when they hold.
 */
export function checkGuards(db: SqliteDb): string[] {
  const want = expectedTriggers(schemaVersion(db));
  const have = triggersOf(db);
  const problems: string[] = [];
  for (const [name, sql] of want) {
    const got = have.get(name);
    if (got === undefined) problems.push(`trigger ${name} was dropped: the log is no longer append-only`);
    else if (got !== sql) problems.push(`trigger ${name} was replaced by another`);
  }
  for (const name of have.keys())
    if (!want.has(name)) problems.push(`trigger ${name} is not one of the audit log's`);
  return problems;
}

/**
 * Puts back the triggers a writer dropped or replaced (one IMMEDIATE transaction), when the log is opened to write:
 * from then on they refuse again. Returns their names ([] when all held). Triggers of other names are left alone.
 */
export function restoreGuards(db: SqliteDb): string[] {
  const want = expectedTriggers(schemaVersion(db));
  return db
    .transaction(() => {
      const have = triggersOf(db);
      const restored: string[] = [];
      for (const [name, sql] of want) {
        if (have.get(name) === sql) continue;
        db.exec(`DROP TRIGGER IF EXISTS "${name}"; ${sql};`);
        restored.push(name);
      }
      return restored;
    })
    .immediate();
}
