import { randomUUID } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync } from 'node:fs';
import { hostname } from 'node:os';
import { dirname } from 'node:path';
import { SkillsError, isSkillsError } from '../errors.js';
import { type Logger, silentLogger } from '../log.js';
import type { AuditStore } from './audit-store.js';
import { newCallId } from './call-id.js';
import type { PendingEvent } from './check-event-input.js';
import { createAppender } from './create-appender.js';
import { closeSession } from './close-session.js';
import { createGroupCommit } from './create-group-commit.js';
import { type SessionOwner, isOwnerAlive } from './is-owner-alive.js';
import { assertKnownVersion, migrate } from './migrate.js';
import { parseEventRow, parseRawEventRow } from './parse-event-row.js';
import { compareProjections } from './compare-projections.js';
import { findCallIds, getCall, listCalls } from './query-calls.js';
import { rebuildProjections, snapshotProjections } from './rebuild-projections.js';
import { recoverSessions } from './recover-sessions.js';
import { openSqlite } from './sqlite/open-sqlite.js';
import type { SqliteDb, SqliteDriver, SqliteDriverChoice } from './sqlite/sqlite-db.js';
import { sessionEvents, sessionState } from './session-state.js';
import type { AppendInput, AuditEvent, AuditSettings, RecoveryReport } from './types.js';
import { verifyChain } from './verify-chain.js';
import { checkGuards, restoreGuards } from './check-guards.js';
import { createWriterMarker, readWriterMarks } from './writer-mark.js';
import { readCheckpoints } from './checkpoint.js';
import { archivableThrough, pruneThrough } from './prune-log.js';

export interface OpenAuditStoreOptions {
  /** The SQLite file. Its folder is created (0700) and a new file is made 0600. */
  path: string;
  log?: Logger;
  /** For readers (CLI): the file must exist; nothing is created, migrated, recovered or written. */
  readOnly?: boolean;
  /** Run crash recovery at open (default true; ignored when read-only). */
  recover?: boolean;
  /** Verify the chain after recovery (default true). O(events): turn off only for tests or benchmarks. */
  verifyOnOpen?: boolean;
  /** How long a write waits for another process's lock (default 10 000 ms). */
  busyTimeoutMs?: number;
  /** Clock, integer ms since the epoch (default `Date.now`). */
  now?: () => number;
  /** Id maker for sessions and calls (default: `randomUUID` for sessions, `newCallId` for calls). */
  newId?: () => string;
  /** This server, recorded in `session_started` (default this pid and host name). */
  owner?: SessionOwner;
  /** Whether a session's owner still runs (default: same host and the pid exists). */
  isOwnerAlive?: (owner: SessionOwner) => boolean;
  /**
   * The anchor key (`loadAnchorKey`): every event this store appends is marked as written by its holder
   * (`writer-mark.ts`). Without it the events are appended unmarked, and `audit verify` says nobody vouches for them.
   * A function is asked inside each append's transaction until it gives the key (see `createWriterMarker`).
   */
  writerKey?: Buffer | (() => Buffer | undefined);
  /** Which SQLite binding opens the file (default `auto`: better-sqlite3 when it loads, else node:sqlite). */
  sqliteDriver?: SqliteDriverChoice | undefined;
}

/** Opens (creating and migrating if needed) the audit log and runs crash recovery. Nothing happens before a call. */
export function openAuditStore(options: OpenAuditStoreOptions): AuditStore {
  const { path, readOnly = false } = options;
  const log = options.log ?? silentLogger();
  const now = options.now ?? Date.now;
  const newSessionId = options.newId ?? randomUUID;
  const makeCallId = options.newId ?? newCallId;
  const owner = options.owner ?? { pid: process.pid, host: hostname() };
  const alive = options.isOwnerAlive ?? ((o: SessionOwner) => isOwnerAlive(o, owner));
  const { db, driver } = connect(path, readOnly, options.busyTimeoutMs ?? 10_000, options.sqliteDriver);

  const guard = <T>(what: string, fn: () => T): T => {
    try {
      return fn();
    } catch (e) {
      if (isSkillsError(e)) throw e;
      throw new SkillsError('AUDIT_FAILED', `audit ${what} failed: ${(e as Error).message}`, {
        hint: 'Nothing was written by this step. Check the audit DB path, disk space and permissions.',
        cause: e,
      });
    }
  };
  const writable = (): void => {
    if (readOnly) throw new SkillsError('AUDIT_FAILED', 'the audit log was opened read-only');
  };

  try {
    if (readOnly) assertKnownVersion(db);
    else {
      migrate(db, now);
      const restored = restoreGuards(db);
      if (restored.length > 0)
        log.warn({ triggers: restored }, 'audit log guard triggers were dropped or replaced: restored them');
    }
  } catch (e) {
    db.close();
    throw isSkillsError(e)
      ? e
      : new SkillsError('AUDIT_FAILED', `cannot open the audit log at ${path}`, { cause: e });
  }

  let refusal: string | undefined;
  const marker =
    readOnly || options.writerKey === undefined ? undefined : createWriterMarker(db, options.writerKey);
  const write = readOnly ? undefined : createAppender(db, now, () => refusal, marker);
  const writeTx = write && db.transaction((events: PendingEvent[]) => events.map(write));
  const commit = (events: PendingEvent[]): AuditEvent[] => {
    writable();
    return guard('write', () => writeTx!.immediate(events));
  };
  const group =
    write &&
    createGroupCommit(db, write, (fn) => {
      writable();
      return guard('write', fn);
    });
  const toPending = (input: AppendInput): PendingEvent => ({
    type: input.type,
    sessionId: input.sessionId,
    callId: input.type === 'tool_call_requested' ? (input.callId ?? makeCallId()) : (input.callId ?? null),
    payload: input.payload,
  });

  const recover = (): RecoveryReport => {
    writable();
    const found = guard('recovery', () =>
      db.transaction(() => recoverSessions(db, write!, alive)).immediate(),
    );
    const chain = options.verifyOnOpen === false ? null : guard('verify', () => verifyChain(db));
    const report = { ...found, chain };
    if (found.closedSessions.length > 0) {
      log.warn(
        {
          sessions: found.closedSessions.length,
          calls: found.interruptedCalls.length,
          approvals: found.deniedApprovals.length,
        },
        'audit recovery closed sessions left open by a stopped server',
      );
    }
    if (chain && !chain.ok) {
      log.error({ eventId: chain.badEventId, reason: chain.reason }, 'audit chain broken');
      refusal ??= `chain broken at event ${chain.badEventId}: ${chain.reason}`;
    }
    return report;
  };

  let recovery: RecoveryReport | null = null;
  if (!readOnly && options.recover !== false) {
    try {
      recovery = recover();
    } catch (e) {
      db.close();
      throw e;
    }
  }
  log.info({ path, readOnly, driver }, 'audit log opened');

  return {
    path,
    readOnly,
    recovery,
    startSession: (input, opts) => {
      const sessionId = opts?.sessionId ?? newSessionId();
      const payload = { ...input, owner };
      return commit([
        { type: 'session_started', sessionId, callId: null, payload },
      ])[0] as AuditEvent<'session_started'>;
    },
    startSessionAsync: async (input, opts) => {
      writable();
      const sessionId = opts?.sessionId ?? newSessionId();
      const payload = { ...input, owner };
      return (await group!.append({
        type: 'session_started',
        sessionId,
        callId: null,
        payload,
      })) as AuditEvent<'session_started'>;
    },
    append: <I extends AppendInput>(input: I) => commit([toPending(input)])[0] as AuditEvent<I['type']>,
    appendMany: (inputs) => commit(inputs.map(toPending)),
    appendAsync: async <I extends AppendInput>(input: I) => {
      writable();
      return (await group!.append(toPending(input))) as AuditEvent<I['type']>;
    },
    endSession: (sessionId, reason) => {
      writable();
      return guard('write', () =>
        db
          .transaction(() => {
            const ended = sessionEvents(db, sessionId, ['session_ended'])[0];
            return ended ?? closeSession(db, write!, sessionId, reason, 'session_ended');
          })
          .immediate(),
      ) as AuditEvent<'session_ended'>;
    },
    recover,
    verify: (from, limit) => guard('verify', () => verifyChain(db, from, limit)),
    refuseRuns: (reason) => {
      if (refusal === undefined) log.error({ reason }, 'audit log failed verification: new runs are refused');
      refusal ??= reason;
    },
    runsRefused: () => refusal,
    lastAnchor: () =>
      guard('read', () => {
        const table = db
          .prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'last_anchor'")
          .get();
        if (table === undefined) return undefined; // a log from before anchors were copied (read-only open)
        const row = db.prepare('SELECT record FROM last_anchor WHERE id = 1').get() as
          { record: string } | undefined;
        return row?.record;
      }),
    setLastAnchor: (record) => {
      writable();
      guard('write', () =>
        db
          .prepare(
            'INSERT INTO last_anchor (id, record) VALUES (1, ?) ON CONFLICT (id) DO UPDATE SET record = excluded.record',
          )
          .run(record),
      );
    },
    eventCount: () =>
      guard(
        'read',
        () =>
          (readCheckpoints(db).at(-1)?.through ?? 0) +
          (db.prepare('SELECT COUNT(*) AS n FROM events').get() as { n: number }).n,
      ),
    checkpoints: () => guard('read', () => readCheckpoints(db)),
    archivableThrough: (endedBefore) => guard('read', () => archivableThrough(db, endedBefore)),
    prune: (checkpoint) => {
      writable();
      return guard('prune', () => pruneThrough(db, checkpoint));
    },
    writerMarks: () => guard('read', () => readWriterMarks(db)),
    ownHead: () => guard('read', () => marker?.ownHead()),
    readSnapshot: (fn) => guard('read', () => db.transaction(fn).deferred()),
    withWriteLock: (fn) => {
      writable();
      return db.transaction(fn).immediate();
    },
    hashAt: (eventId) =>
      guard('read', () => {
        const row = db.prepare('SELECT hash FROM events WHERE event_id = ?').get(eventId) as
          { hash: string } | undefined;
        if (row !== undefined) return row.hash;
        // Pruned: the newest checkpoint still names the hash of event 1 and of the last event it covers.
        const cp = readCheckpoints(db).at(-1);
        return cp === undefined
          ? undefined
          : eventId === cp.through
            ? cp.hash
            : eventId === 1
              ? cp.first
              : undefined;
      }),
    getEvent: (eventId) =>
      guard('read', () => {
        const row = db.prepare('SELECT * FROM events WHERE event_id = ?').get(eventId);
        return row === undefined ? undefined : parseEventRow(row);
      }),
    sessionState: (sessionId) => guard('read', () => sessionState(db, sessionId)),
    sessionEvents: (sessionId, types) => guard('read', () => sessionEvents(db, sessionId, types)),
    listCalls: (filter) => guard('read', () => listCalls(db, filter)),
    getCall: (callId) => guard('read', () => getCall(db, callId)),
    findCallIds: (fragment, limit) => guard('read', () => findCallIds(db, fragment, limit)),
    exportEvents: function* () {
      // One statement = one read snapshot. Do not write on this store while iterating (SQLite forbids it).
      const rows = guard('read', () => db.prepare('SELECT * FROM events ORDER BY event_id').iterate());
      for (;;) {
        const next = guard('read', () => rows.next());
        if (next.done === true) return;
        yield parseRawEventRow(next.value);
      }
    },
    rebuildProjections: () => {
      writable();
      return guard('rebuild', () => rebuildProjections(db));
    },
    snapshotProjections: () => guard('read', () => snapshotProjections(db)),
    compareProjections: () => guard('read', () => compareProjections(db)),
    checkFile: () =>
      guard('read', () => [
        ...(db.pragma('quick_check(20)') as { quick_check: string }[])
          .map((r) => r.quick_check)
          .filter((m) => m !== 'ok'),
        ...checkGuards(db),
      ]),
    settings: () => guard('read', () => readSettings(db)),
    close: () => {
      if (!db.open) return;
      group?.flush();
      db.close();
    },
  };
}

function connect(
  path: string,
  readOnly: boolean,
  busyTimeoutMs: number,
  choice: SqliteDriverChoice = 'auto',
): { db: SqliteDb; driver: SqliteDriver } {
  const created = !readOnly && !existsSync(path);
  if (created) mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  let db: SqliteDb;
  let driver: SqliteDriver;
  try {
    ({ db, driver } = openSqlite(path, { readOnly, busyTimeoutMs, driver: choice }));
  } catch (cause) {
    // A driver that cannot load here says why (module, Node ABI, fix): that is the cause, not the folder.
    if (isSkillsError(cause)) throw cause;
    const hint = readOnly
      ? 'No audit log there yet: nothing has been recorded, or --audit points elsewhere.'
      : 'Check that the folder is writable.';
    throw new SkillsError('AUDIT_FAILED', `cannot open the audit log at ${path}`, { hint, cause });
  }
  try {
    if (created) chmodSync(path, 0o600);
    if (readOnly) {
      db.pragma('query_only = ON');
      return { db, driver };
    }
    const mode = db.pragma('journal_mode = WAL', { simple: true });
    if (mode !== 'wal') throw new Error(`journal_mode is ${String(mode)}, WAL is required`);
    db.pragma('synchronous = FULL');
    db.pragma('foreign_keys = ON');
    db.pragma('journal_size_limit = 67108864');
    // Each event's insert and each savepoint keeps the pages it changes in a statement journal until it ends; in a
    // file, that was a write() per page (a sixth of the writer thread's time under load), in memory it is a copy.
    db.pragma('temp_store = MEMORY');
    // A writer touches the last pages of each index (call ids grow with time) and one page per open session in the
    // indexes keyed by session: 512 KiB holds that, and a miss is served from the OS page cache. better-sqlite3's
    // default (16 MB) kept every page a server had written since it started, in its memory.
    db.pragma('cache_size = -512');
    // On macOS fsync() does not reach the platter; F_FULLFSYNC does.
    if (process.platform === 'darwin') db.pragma('fullfsync = ON');
    return { db, driver };
  } catch (cause) {
    db.close();
    throw new SkillsError('AUDIT_FAILED', `cannot set up the audit log at ${path}`, { cause });
  }
}

const SYNC = ['off', 'normal', 'full', 'extra'] as const;

/** `cache_size` in KiB: SQLite reads a negative value as KiB, a positive one as pages. */
const cacheKiB = (size: number, pageSize: number): number => (size < 0 ? -size : (size * pageSize) / 1024);

function readSettings(db: SqliteDb): AuditSettings {
  const p = (name: string): unknown => db.pragma(name, { simple: true });
  return {
    journalMode: String(p('journal_mode')),
    synchronous: SYNC[Number(p('synchronous'))] ?? 'off',
    foreignKeys: p('foreign_keys') === 1,
    busyTimeoutMs: Number(p('busy_timeout')),
    cacheKiB: cacheKiB(Number(p('cache_size')), Number(p('page_size'))),
    schemaVersion: Number(p('user_version')),
  };
}
