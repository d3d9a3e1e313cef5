import { existsSync } from 'node:fs';
import type pg from 'pg';
import { SkillsError } from '../../errors.js';
import { appendAnchor, readAnchorLines } from '../anchor-file.js';
import { loadAnchorKey } from '../anchor-key.js';
import { type AnchorRecord, readSignedAnchor, signAnchor } from '../anchor-record.js';
import { checkAnchors } from '../check-anchors.js';
import { GENESIS_HASH } from '../event-hash.js';
import { pgFailure } from './pg-failure.js';
import { CHAIN_LOCK, PG_SCHEMA } from './pg-schema.js';
import { verifyPgChain } from './verify-pg-chain.js';

export interface PgAnchorOptions {
  /** The signing key (made, 0600, when missing): never in the database. */
  keyFile: string;
  /** The anchor file (JSON lines, append-only), outside the database. */
  file: string;
  now?: () => number;
}

/**
 * Writes a signed anchor of the PostgreSQL log's head, as the SQLite store does: holding the chain lock (no append
 * commits meanwhile), verifies the chain and the anchors so far, then inserts the anchor's copy into
 * `anchor_copies` and appends the anchor to the file, and commits. The first call (a key it makes, no anchor file,
 * no copy) vouches for the log as it stands. Returns the anchor, or undefined when the head is
 * already anchored. Throws AUDIT_CHAIN_BROKEN when the chain or the anchors do not verify (nothing written), and
 * AUDIT_FAILED when the database cannot be reached. Needs a pool of two connections or more.
 */
export async function anchorPgLog(pool: pg.Pool, o: PgAnchorOptions): Promise<AnchorRecord | undefined> {
  const keyIsNew = !existsSync(o.keyFile);
  const key = loadAnchorKey(o.keyFile, { create: true });
  let client: pg.PoolClient;
  try {
    client = await pool.connect();
  } catch (err) {
    throw pgFailure('anchor', err);
  }
  let failed: unknown;
  try {
    await client.query('BEGIN');
    await client.query('SELECT pg_advisory_xact_lock($1)', [CHAIN_LOCK]);
    const { chain, hashes, lastAnchor } = await verifyPgChain(pool);
    if (!chain.ok) throw broken(`chain broken at event ${chain.badEventId}: ${chain.reason}`);
    const lines = readAnchorLines(o.file);
    const check = checkAnchors({ lines, copy: lastAnchor }, key, {
      events: chain.events,
      hashAt: (id) => hashes[id - 1],
    });
    // A new key with no anchors anywhere starts anchoring: the log is vouched for from now on.
    const first = keyIsNew && lines === undefined && lastAnchor === undefined;
    const problem = first ? undefined : check.problems[0];
    if (problem !== undefined) throw broken(`${problem.kind}: ${problem.detail}`);
    const last = readSignedAnchor(key, lines?.at(-1));
    const head = chain.head ?? GENESIS_HASH;
    if (last !== undefined && last.events === chain.events && last.head === head) {
      await client.query('ROLLBACK');
      return undefined;
    }
    const copy = readSignedAnchor(key, lastAnchor, 'copy');
    const unsigned = {
      v: 2 as const,
      seq: Math.max(last?.seq ?? 0, copy?.seq ?? 0) + 1,
      ts: (o.now ?? Date.now)(),
      events: chain.events,
      head,
      first: hashes[0] ?? GENESIS_HASH,
    };
    // The copy first: if the file append fails the copy rolls back; if COMMIT fails after it, the file is one
    // anchor ahead of the copy, which the check allows.
    await client.query(`INSERT INTO ${PG_SCHEMA}.anchor_copies (seq, record) VALUES ($1, $2)`, [
      unsigned.seq,
      JSON.stringify(signAnchor(key, unsigned, 'copy')),
    ]);
    const anchor = signAnchor(key, unsigned);
    appendAnchor(o.file, anchor);
    await client.query('COMMIT');
    return anchor;
  } catch (err) {
    failed = err;
    await client.query('ROLLBACK').catch(() => undefined);
    throw pgFailure('anchor', err);
  } finally {
    client.release(failed === undefined ? undefined : true);
  }
}

const broken = (why: string) =>
  new SkillsError('AUDIT_CHAIN_BROKEN', `not anchored: the audit log failed verification (${why})`, {
    hint: 'Run `skills-mcp audit verify --audit postgres://…` to see what changed.',
  });
