import { EVENT_TYPES } from '../event-types.js';

/** The schema the audit tables live in. */
export const PG_SCHEMA = 'skills_mcp';
/** `pg_advisory_xact_lock` key that serializes appends: held from reading the head until COMMIT. */
export const CHAIN_LOCK = 7_316_946_801_001;
/** Held while migrating, so replicas starting together migrate once. */
export const MIGRATION_LOCK = 7_316_946_801_002;

const quoted = (list: readonly string[]) => list.map((t) => `'${t}'`).join(', ');
/** The event types the first migration allowed: frozen, so a new schema is built exactly as an old one was. */
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
];
/** The event types the passkey migration allowed: frozen. */
const PASSKEY_EVENT_TYPES = [...V1_EVENT_TYPES, 'approver_enrolled', 'approver_removed'];
const HEX64 = `'^[0-9a-f]{64}$'`;

/** Triggers that make `table` append-only for every role, its owner included. */
const refuseChanges = (table: string) =>
  ['UPDATE', 'DELETE', 'TRUNCATE']
    .map(
      (op) =>
        `CREATE TRIGGER ${table}_no_${op.toLowerCase()} BEFORE ${op} ON ${PG_SCHEMA}.${table} ` +
        `FOR EACH ${op === 'TRUNCATE' ? 'STATEMENT' : 'ROW'} EXECUTE FUNCTION ${PG_SCHEMA}.audit_events_refuse();`,
    )
    .join('\n');

/**
 * Numbered migrations; each runs once, in one transaction, as the role that owns the tables (not the server's
 * role). `payload` is text, not jsonb: it holds the canonical JSON exactly as hashed.
 */
export const PG_MIGRATIONS: readonly string[] = [
  `
  CREATE TABLE ${PG_SCHEMA}.audit_events (
    event_id   bigint PRIMARY KEY CHECK (event_id >= 1),
    ts         bigint NOT NULL,
    session_id text   NOT NULL,
    call_id    text,
    type       text   NOT NULL CHECK (type IN (${quoted(V1_EVENT_TYPES)})),
    payload    text   NOT NULL,
    prev_hash  text   NOT NULL CHECK (prev_hash ~ ${HEX64}),
    hash       text   NOT NULL UNIQUE CHECK (hash ~ ${HEX64})
  );
  CREATE INDEX audit_events_call ON ${PG_SCHEMA}.audit_events (call_id) WHERE call_id IS NOT NULL;
  CREATE INDEX audit_events_session ON ${PG_SCHEMA}.audit_events (session_id);

  -- Append-only, whoever asks: UPDATE, DELETE and TRUNCATE raise; an INSERT must extend the chain.
  CREATE FUNCTION ${PG_SCHEMA}.audit_events_refuse() RETURNS trigger LANGUAGE plpgsql AS $$
  BEGIN
    RAISE EXCEPTION 'audit records are append-only: % refused', TG_OP USING ERRCODE = 'insufficient_privilege';
  END $$;
  ${refuseChanges('audit_events')}

  CREATE FUNCTION ${PG_SCHEMA}.audit_events_extend() RETURNS trigger LANGUAGE plpgsql AS $$
  DECLARE
    last_id bigint;
    last_hash text;
  BEGIN
    PERFORM pg_advisory_xact_lock(${CHAIN_LOCK});
    SELECT event_id, hash INTO last_id, last_hash FROM ${PG_SCHEMA}.audit_events ORDER BY event_id DESC LIMIT 1;
    IF NEW.event_id <> coalesce(last_id, 0) + 1 OR NEW.prev_hash <> coalesce(last_hash, repeat('0', 64)) THEN
      RAISE EXCEPTION 'audit event % does not extend the chain (head is %)', NEW.event_id, coalesce(last_id, 0)
        USING ERRCODE = 'integrity_constraint_violation';
    END IF;
    RETURN NEW;
  END $$;
  CREATE TRIGGER audit_events_extend BEFORE INSERT ON ${PG_SCHEMA}.audit_events
    FOR EACH ROW EXECUTE FUNCTION ${PG_SCHEMA}.audit_events_extend();

  REVOKE ALL ON ${PG_SCHEMA}.audit_events FROM PUBLIC;
  `,
  `
  -- The copies of the signed chain heads (anchors) the server also appends to a file outside the database: the
  -- newest row is the newest anchor written. Append-only like the events.
  CREATE TABLE ${PG_SCHEMA}.anchor_copies (
    seq    bigint PRIMARY KEY CHECK (seq >= 1),
    record text   NOT NULL
  );
  ${refuseChanges('anchor_copies')}
  REVOKE ALL ON ${PG_SCHEMA}.anchor_copies FROM PUBLIC;
  `,
  `
  -- The server processes writing the log, each with a lease it renews (heartbeat). Not part of the record: a peer
  -- that finds a lease expired closes that process's open sessions in the log, then removes its row.
  CREATE TABLE ${PG_SCHEMA}.replicas (
    host         text        NOT NULL,
    pid          integer     NOT NULL,
    started_at   timestamptz NOT NULL DEFAULT clock_timestamp(),
    heartbeat_at timestamptz NOT NULL DEFAULT clock_timestamp(),
    PRIMARY KEY (host, pid)
  );
  REVOKE ALL ON ${PG_SCHEMA}.replicas FROM PUBLIC;
  `,
  `
  -- What a person is shown of a console approval waiting on one server process, so that the console of any other
  -- can show and decide it. Not part of the record: \`sealed\` is AES-256-GCM under a key derived from the secret the
  -- replicas share (the database never holds the values in the clear), its additional data the call id. A row is
  -- deleted once its call is decided or closed, and ignored past \`expires_at\` (the approval's timeout).
  CREATE TABLE ${PG_SCHEMA}.pending_views (
    call_id    text        PRIMARY KEY,
    session_id text        NOT NULL,
    host       text        NOT NULL,
    pid        integer     NOT NULL,
    expires_at timestamptz NOT NULL,
    sealed     bytea       NOT NULL CHECK (octet_length(sealed) <= 4194304)
  );
  REVOKE ALL ON ${PG_SCHEMA}.pending_views FROM PUBLIC;
  `,
  `
  -- A view in two sealed parts: \`sealed\`, the card (small: what the approval card shows), and \`sealed_input\`, the
  -- arguments and input in full, read only for the page that shows them (NULL when too large to share). \`principal\`
  -- (sha256 of the caller, else the session family) lets a reader share its listed slots fairly among callers.
  -- Views sealed in the former single-part format are not read any more: removed (a working table, not the record).
  DELETE FROM ${PG_SCHEMA}.pending_views;
  ALTER TABLE ${PG_SCHEMA}.pending_views
    ADD COLUMN principal text,
    ADD COLUMN sealed_input bytea CHECK (octet_length(sealed_input) <= 4194304),
    ADD CONSTRAINT pending_views_card_size CHECK (octet_length(sealed) <= 65536);
  CREATE INDEX pending_views_expiry ON ${PG_SCHEMA}.pending_views (expires_at);
  CREATE INDEX pending_views_session ON ${PG_SCHEMA}.pending_views (session_id);
  CREATE INDEX pending_views_owner ON ${PG_SCHEMA}.pending_views (host, pid);
  `,
  `
  -- Passkey enrolment and removal are events of the log too.
  ALTER TABLE ${PG_SCHEMA}.audit_events
    DROP CONSTRAINT audit_events_type_check,
    ADD CONSTRAINT audit_events_type_check CHECK (type IN (${quoted(PASSKEY_EVENT_TYPES)}));
  `,
  `
  -- So is an update of a pinned git source.
  ALTER TABLE ${PG_SCHEMA}.audit_events
    DROP CONSTRAINT audit_events_type_check,
    ADD CONSTRAINT audit_events_type_check CHECK (type IN (${quoted(EVENT_TYPES)}));
  `,
  `
  -- The passkeys that approve runs in the approval console of every replica (one server keeps them in its state
  -- folder's approvers.json): one row per credential, \`record\` its enrolment (public key, counter, name, subject).
  -- Not part of the record: enrolled and removed with \`skills-mcp approvers\`.
  CREATE TABLE ${PG_SCHEMA}.approvers (
    credential_id text        PRIMARY KEY CHECK (length(credential_id) <= 1400),
    record        jsonb       NOT NULL CHECK (octet_length(record::text) <= 16384),
    enrolled_at   timestamptz NOT NULL DEFAULT clock_timestamp()
  );
  REVOKE ALL ON ${PG_SCHEMA}.approvers FROM PUBLIC;
  `,
];

/** The tables the server's role may INSERT into and SELECT from (and readers SELECT from). */
export const PG_TABLES = ['audit_events', 'anchor_copies'] as const;
/** Working tables the server's role also updates and deletes from (never the record). */
export const PG_WORK_TABLES = ['replicas', 'approvers'] as const;
/** Sealed views of waiting approvals: the server's role inserts, reads and deletes them; readers get nothing. */
export const PG_VIEW_TABLES = ['pending_views'] as const;
