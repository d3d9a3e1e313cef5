import type { SqliteDb } from './sqlite/sqlite-db.js';
import { SkillsError } from '../errors.js';
import { EVENT_TYPES } from './event-types.js';
import { GENESIS_HASH } from './event-hash.js';

export interface Migration {
  version: number;
  name: string;
  sql: string;
}

const quoted = (list: readonly string[]) => list.map((t) => `'${t}'`).join(', ');

/** The event types migration 1 allowed: frozen, so a new database is built exactly as an old one was. */
const V1_EVENT_TYPES = [
  'session_started',
  'tool_call_requested',
  'policy_decided',
  'approval_requested',
  'approval_decided',
  'loop_guard_tripped',
  'session_aborted',
  'tool_call_started',
  'tool_call_finished',
  'tool_call_interrupted',
  'session_error',
  'session_ended',
] as const;

/** The triggers on `events` as migration 4 left them (migration 5 recreates them exactly). */
const EVENTS_TRIGGERS_V4 = `
CREATE TRIGGER events_no_update BEFORE UPDATE ON events
BEGIN SELECT RAISE(ABORT, 'audit events are append-only: UPDATE refused'); END;
CREATE TRIGGER events_no_delete BEFORE DELETE ON events
WHEN OLD.event_id > (SELECT COALESCE(MAX(through_event), 0) FROM checkpoints)
BEGIN SELECT RAISE(ABORT, 'audit events are append-only: DELETE refused'); END;
CREATE TRIGGER events_extend_chain BEFORE INSERT ON events
WHEN NEW.event_id IS NOT COALESCE(
    (SELECT MAX(event_id) FROM events), (SELECT MAX(through_event) FROM checkpoints), 0) + 1
  OR NEW.prev_hash IS NOT COALESCE(
    (SELECT hash FROM events ORDER BY event_id DESC LIMIT 1),
    (SELECT through_hash FROM checkpoints ORDER BY seq DESC LIMIT 1),
    '${GENESIS_HASH}')
BEGIN SELECT RAISE(ABORT, 'audit event does not extend the hash chain'); END;
`;

/** The event types migration 5 allowed: frozen, as `V1_EVENT_TYPES`. */
const V5_EVENT_TYPES = [...V1_EVENT_TYPES, 'approver_enrolled', 'approver_removed'] as const;

/**
 * SQLite cannot change a CHECK in place: the table is rebuilt with the rows as they are (the chain is over the rows, so
 * it still verifies), then its indexes and triggers are made again exactly as before.
 */
const rebuildEvents = (version: number, types: readonly string[]): string => `
DROP TRIGGER events_no_update;
DROP TRIGGER events_no_delete;
DROP TRIGGER events_extend_chain;
DROP TRIGGER checkpoints_extend;

CREATE TABLE events_v${version} (
  event_id INTEGER PRIMARY KEY,
  ts INTEGER NOT NULL,
  session_id TEXT NOT NULL REFERENCES sessions(session_id) DEFERRABLE INITIALLY DEFERRED,
  call_id TEXT,
  type TEXT NOT NULL CHECK (type IN (${quoted(types)})),
  payload TEXT NOT NULL CHECK (json_valid(payload)),
  prev_hash TEXT NOT NULL,
  hash TEXT NOT NULL
) STRICT;
INSERT INTO events_v${version} (event_id, ts, session_id, call_id, type, payload, prev_hash, hash)
  SELECT event_id, ts, session_id, call_id, type, payload, prev_hash, hash FROM events ORDER BY event_id;
DROP TABLE events;
ALTER TABLE events_v${version} RENAME TO events;
CREATE INDEX events_session_type ON events(session_id, type);
CREATE INDEX events_call ON events(call_id) WHERE call_id IS NOT NULL;
${EVENTS_TRIGGERS_V4}
CREATE TRIGGER checkpoints_extend BEFORE INSERT ON checkpoints
WHEN NEW.seq IS NOT (SELECT COALESCE(MAX(seq), 0) + 1 FROM checkpoints)
  OR NEW.through_event <= (SELECT COALESCE(MAX(through_event), 0) FROM checkpoints)
  OR NEW.through_hash IS NOT (SELECT hash FROM events WHERE event_id = NEW.through_event)
BEGIN SELECT RAISE(ABORT, 'a checkpoint must name a later event of the chain, with its hash'); END;
`;

/**
 * Numbered migrations, applied in order, each in its own transaction; `PRAGMA user_version` holds the last
 * applied number and `schema_migrations` records when. Never edit a shipped migration: add the next one.
 * Projections reference sessions/calls with DEFERRABLE foreign keys so `rebuildProjections` can clear and
 * refill them inside one transaction.
 */
export const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: 'events, hash chain, projections',
    sql: `
CREATE TABLE schema_migrations (
  version INTEGER PRIMARY KEY,
  name TEXT NOT NULL,
  applied_ts INTEGER NOT NULL
) STRICT;

CREATE TABLE sessions (
  session_id TEXT PRIMARY KEY,
  transport TEXT NOT NULL,
  owner_pid INTEGER NOT NULL,
  owner_host TEXT NOT NULL,
  started_event_id INTEGER NOT NULL,
  started_ts INTEGER NOT NULL,
  aborted INTEGER NOT NULL DEFAULT 0,
  ended_event_id INTEGER,
  ended_ts INTEGER,
  end_reason TEXT
) STRICT;
CREATE INDEX sessions_open ON sessions(session_id) WHERE ended_event_id IS NULL;

CREATE TABLE events (
  event_id INTEGER PRIMARY KEY,
  ts INTEGER NOT NULL,
  session_id TEXT NOT NULL REFERENCES sessions(session_id) DEFERRABLE INITIALLY DEFERRED,
  call_id TEXT,
  type TEXT NOT NULL CHECK (type IN (${quoted(V1_EVENT_TYPES)})),
  payload TEXT NOT NULL CHECK (json_valid(payload)),
  prev_hash TEXT NOT NULL,
  hash TEXT NOT NULL
) STRICT;
CREATE INDEX events_session_type ON events(session_id, type);
CREATE INDEX events_call ON events(call_id) WHERE call_id IS NOT NULL;

CREATE TRIGGER events_no_update BEFORE UPDATE ON events
BEGIN SELECT RAISE(ABORT, 'audit events are append-only: UPDATE refused'); END;
CREATE TRIGGER events_no_delete BEFORE DELETE ON events
BEGIN SELECT RAISE(ABORT, 'audit events are append-only: DELETE refused'); END;
CREATE TRIGGER events_extend_chain BEFORE INSERT ON events
WHEN NEW.event_id IS NOT (SELECT COALESCE(MAX(event_id), 0) + 1 FROM events)
  OR NEW.prev_hash IS NOT COALESCE((SELECT hash FROM events ORDER BY event_id DESC LIMIT 1), '${GENESIS_HASH}')
BEGIN SELECT RAISE(ABORT, 'audit event does not extend the hash chain'); END;

CREATE TABLE calls (
  call_id TEXT PRIMARY KEY,
  session_id TEXT NOT NULL REFERENCES sessions(session_id) DEFERRABLE INITIALLY DEFERRED,
  tool TEXT NOT NULL,
  skill TEXT,
  script TEXT,
  input_sha256 TEXT NOT NULL,
  input_bytes INTEGER NOT NULL,
  bundle_sha256 TEXT,
  approval_key TEXT,
  valid INTEGER NOT NULL,
  requested_event_id INTEGER NOT NULL,
  requested_ts INTEGER NOT NULL,
  policy_decision TEXT,
  policy_rule TEXT,
  risk_level TEXT,
  approval_decision TEXT,
  approval_reason TEXT,
  started_event_id INTEGER,
  started_ts INTEGER,
  state TEXT NOT NULL CHECK (state IN ('requested', 'started', 'finished', 'interrupted')),
  status TEXT,
  exit_code INTEGER,
  duration_ms INTEGER,
  terminal_event_id INTEGER,
  terminal_ts INTEGER
) STRICT;
CREATE INDEX calls_session ON calls(session_id, requested_event_id);
CREATE INDEX calls_skill ON calls(skill, requested_event_id);
CREATE INDEX calls_order ON calls(requested_event_id);
CREATE INDEX calls_open ON calls(session_id) WHERE state IN ('requested', 'started');

CREATE TABLE approvals (
  call_id TEXT PRIMARY KEY REFERENCES calls(call_id) DEFERRABLE INITIALLY DEFERRED,
  session_id TEXT NOT NULL,
  approval_key TEXT NOT NULL,
  channel TEXT NOT NULL,
  requested_event_id INTEGER,
  requested_ts INTEGER,
  decided_event_id INTEGER,
  decided_ts INTEGER,
  decision TEXT,
  reason TEXT
) STRICT;
CREATE INDEX approvals_pending ON approvals(session_id) WHERE decided_event_id IS NULL;

CREATE TABLE artifacts (
  call_id TEXT NOT NULL REFERENCES calls(call_id) DEFERRABLE INITIALLY DEFERRED,
  path TEXT NOT NULL,
  sha256 TEXT NOT NULL,
  bytes INTEGER NOT NULL,
  event_id INTEGER NOT NULL,
  PRIMARY KEY (call_id, path)
) STRICT;
`,
  },
  {
    version: 2,
    name: 'copy of the newest audit anchor',
    sql: `
CREATE TABLE last_anchor (
  id INTEGER PRIMARY KEY CHECK (id = 1),
  record TEXT NOT NULL
) STRICT;
`,
  },
  {
    version: 3,
    name: 'writer marks: which events a key holder appended',
    sql: `
CREATE TABLE writer_marks (
  first_event INTEGER PRIMARY KEY,
  last_event INTEGER NOT NULL CHECK (last_event >= first_event),
  mac TEXT NOT NULL
) STRICT;

CREATE TRIGGER writer_marks_no_delete BEFORE DELETE ON writer_marks
BEGIN SELECT RAISE(ABORT, 'writer marks are append-only'); END;

CREATE TRIGGER writer_marks_only_extend BEFORE UPDATE ON writer_marks
WHEN NEW.first_event <> OLD.first_event OR NEW.last_event <= OLD.last_event
BEGIN SELECT RAISE(ABORT, 'a writer mark can only be extended'); END;
`,
  },
  {
    version: 4,
    name: 'retention checkpoints: events archived and pruned',
    sql: `
CREATE TABLE checkpoints (
  seq INTEGER PRIMARY KEY,
  through_event INTEGER NOT NULL,
  through_hash TEXT NOT NULL,
  first_hash TEXT NOT NULL,
  archive_sha256 TEXT NOT NULL,
  ts INTEGER NOT NULL,
  mac TEXT NOT NULL
) STRICT;

CREATE TRIGGER checkpoints_no_update BEFORE UPDATE ON checkpoints
BEGIN SELECT RAISE(ABORT, 'checkpoints are append-only: UPDATE refused'); END;
CREATE TRIGGER checkpoints_no_delete BEFORE DELETE ON checkpoints
BEGIN SELECT RAISE(ABORT, 'checkpoints are append-only: DELETE refused'); END;
CREATE TRIGGER checkpoints_extend BEFORE INSERT ON checkpoints
WHEN NEW.seq IS NOT (SELECT COALESCE(MAX(seq), 0) + 1 FROM checkpoints)
  OR NEW.through_event <= (SELECT COALESCE(MAX(through_event), 0) FROM checkpoints)
  OR NEW.through_hash IS NOT (SELECT hash FROM events WHERE event_id = NEW.through_event)
BEGIN SELECT RAISE(ABORT, 'a checkpoint must name a later event of the chain, with its hash'); END;

DROP TRIGGER events_no_delete;
CREATE TRIGGER events_no_delete BEFORE DELETE ON events
WHEN OLD.event_id > (SELECT COALESCE(MAX(through_event), 0) FROM checkpoints)
BEGIN SELECT RAISE(ABORT, 'audit events are append-only: DELETE refused'); END;

DROP TRIGGER events_extend_chain;
CREATE TRIGGER events_extend_chain BEFORE INSERT ON events
WHEN NEW.event_id IS NOT COALESCE(
    (SELECT MAX(event_id) FROM events), (SELECT MAX(through_event) FROM checkpoints), 0) + 1
  OR NEW.prev_hash IS NOT COALESCE(
    (SELECT hash FROM events ORDER BY event_id DESC LIMIT 1),
    (SELECT through_hash FROM checkpoints ORDER BY seq DESC LIMIT 1),
    '${GENESIS_HASH}')
BEGIN SELECT RAISE(ABORT, 'audit event does not extend the hash chain'); END;

DROP TRIGGER writer_marks_no_delete;
CREATE TRIGGER writer_marks_no_delete BEFORE DELETE ON writer_marks
WHEN OLD.last_event > (SELECT COALESCE(MAX(through_event), 0) FROM checkpoints)
BEGIN SELECT RAISE(ABORT, 'writer marks are append-only'); END;
`,
  },
  {
    version: 5,
    name: 'event types for passkey enrolment and removal',
    // SQLite cannot change a CHECK in place: the table is rebuilt with the rows as they are (the chain is over
    // the rows, so it still verifies), then its indexes and triggers are made again exactly as before.
    sql: rebuildEvents(5, V5_EVENT_TYPES),
  },
  {
    version: 6,
    name: 'event type for git source updates',
    sql: rebuildEvents(6, EVENT_TYPES),
  },
];

export const SCHEMA_VERSION = MIGRATIONS.length;

export const schemaVersion = (db: SqliteDb): number => db.pragma('user_version', { simple: true }) as number;

/**
 * Brings the schema up to date. Safe against a concurrent opener: each step re-reads `user_version` inside an
 * IMMEDIATE transaction. Refuses a database written by a newer skills-mcp.
 */
export function migrate(db: SqliteDb, now: () => number): number {
  for (const m of MIGRATIONS) {
    db.transaction(() => {
      if (schemaVersion(db) >= m.version) return;
      if (m.version === 1 && db.prepare('SELECT 1 FROM sqlite_master LIMIT 1').get() !== undefined) {
        throw notAuditLog();
      }
      db.exec(m.sql);
      db.prepare('INSERT INTO schema_migrations (version, name, applied_ts) VALUES (?, ?, ?)').run(
        m.version,
        m.name,
        now(),
      );
      db.pragma(`user_version = ${m.version}`);
    }).immediate();
  }
  return assertKnownVersion(db);
}

/** The schema version, or AUDIT_FAILED when this build cannot read it. */
export function assertKnownVersion(db: SqliteDb): number {
  const version = schemaVersion(db);
  if (version > SCHEMA_VERSION) {
    throw new SkillsError(
      'AUDIT_FAILED',
      `audit log schema v${version} is newer than this skills-mcp (v${SCHEMA_VERSION})`,
      {
        hint: 'Upgrade skills-mcp, or point --audit at another file.',
      },
    );
  }
  if (version === 0) throw notAuditLog();
  return version;
}

const notAuditLog = (): SkillsError =>
  new SkillsError('AUDIT_FAILED', 'the file is not a skills-mcp audit log', {
    hint: 'Check the --audit path.',
  });
