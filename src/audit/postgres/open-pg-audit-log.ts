import type pg from 'pg';
import type { AnchorRecord } from '../anchor-record.js';
import type { AuditEvent } from '../types.js';
import { anchorPgLog, type PgAnchorOptions } from './anchor-pg-log.js';
import { parseRawEventRow, type ExportedEvent } from '../parse-event-row.js';
import { appendPgEvents, type PgAppendInput } from './append-pg-events.js';
import { openPgPool, type PgPoolOptions } from './open-pg-pool.js';
import { redactPostgresUrl } from './postgres-url.js';
import { readPgEvents } from './read-pg-events.js';
import { verifyPgChain, type PgVerifyResult } from './verify-pg-chain.js';

/**
 * The audit log kept in PostgreSQL, shared by any number of writers (processes, hosts): one hash chain, appends
 * serialized by an advisory lock, each durable when it resolves. The schema must exist (`migratePgAudit`).
 * This is the event log only: the SQLite store's session and call bookkeeping (projections, state checks,
 * recovery) is not here.
 */
export interface PgAuditLog {
  /** The database, as it may be shown (no password). */
  readonly target: string;
  /** Appends one event; resolves once it is committed. */
  append(input: PgAppendInput): Promise<AuditEvent>;
  /** Appends several events in one transaction: all are committed or none. */
  appendMany(inputs: readonly PgAppendInput[]): Promise<AuditEvent[]>;
  /** Walks the chain; names the first bad row. */
  verify(): Promise<PgVerifyResult>;
  /** Writes a signed anchor of the head to a file outside the database, and its copy to the database. */
  anchor(o: PgAnchorOptions): Promise<AnchorRecord | undefined>;
  /**
   * Every event from one snapshot, in chain order, in the JSONL export shape. `before` runs first inside the
   * snapshot: it reads what must be seen together with the events.
   */
  exportEvents(before?: (client: pg.PoolClient) => Promise<void>): AsyncGenerator<ExportedEvent>;
  /** Closes the connections. Idempotent. */
  close(): Promise<void>;
}

/** Opens the log; connects on first use. Throws CONFIG_INVALID for a URL it cannot use. */
export function openPgAuditLog(o: PgPoolOptions): PgAuditLog {
  const pool = openPgPool(o);
  let closed: Promise<void> | undefined;
  return {
    target: redactPostgresUrl(o.url),
    append: async (input) => (await appendPgEvents(pool, [input]))[0]!,
    appendMany: (inputs) => appendPgEvents(pool, inputs),
    verify: () => verifyPgChain(pool),
    anchor: (a) => anchorPgLog(pool, a),
    async *exportEvents(before) {
      for await (const row of readPgEvents(pool, before)) yield parseRawEventRow(row);
    },
    close: () => (closed ??= pool.end()),
  };
}
