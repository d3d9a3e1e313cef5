import { createHmac, timingSafeEqual } from 'node:crypto';
import type { SqliteDb } from './sqlite/sqlite-db.js';
import { canonicalJson } from '../canonical-json.js';

/**
 * A retention checkpoint: "events 1–`through` were archived to a file hashing to `archiveSha256` and pruned; event
 * `through` hashed to `hash`, event 1 to `first`". The chain goes on from `hash`. Signed with the anchor key, over
 * its own fields and the previous checkpoint's, so a writer of the database without the key cannot make one to hide
 * a cut, nor drop one from between two others.
 */
export interface Checkpoint {
  seq: number;
  through: number;
  hash: string;
  first: string;
  archiveSha256: string;
  ts: number;
  mac: string;
}

export type UnsignedCheckpoint = Omit<Checkpoint, 'mac'>;

const macOf = (key: Buffer, c: UnsignedCheckpoint, previous: Checkpoint | undefined): string =>
  createHmac('sha256', key)
    .update('skills-mcp audit checkpoint v1\0', 'utf8')
    .update(
      canonicalJson({
        seq: c.seq,
        through: c.through,
        hash: c.hash,
        first: c.first,
        archive_sha256: c.archiveSha256,
        ts: c.ts,
        previous: previous === undefined ? null : previous.mac,
      }),
      'utf8',
    )
    .digest('hex');

/** The checkpoint signed with `key`, following `previous` (the newest one before it, if any). */
export const signCheckpoint = (
  key: Buffer,
  c: UnsignedCheckpoint,
  previous: Checkpoint | undefined,
): Checkpoint => ({ ...c, mac: macOf(key, c, previous) });

/** Whether `c` was signed with `key` after `previous` (constant time). */
export function isCheckpointSigned(key: Buffer, c: Checkpoint, previous: Checkpoint | undefined): boolean {
  if (!/^[0-9a-f]{64}$/.test(c.mac)) return false;
  return timingSafeEqual(Buffer.from(macOf(key, c, previous), 'hex'), Buffer.from(c.mac, 'hex'));
}

/** Every checkpoint, oldest first ([] for a log never pruned, or one from before checkpoints). */
export function readCheckpoints(db: SqliteDb): Checkpoint[] {
  const table = db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'checkpoints'").get();
  if (table === undefined) return [];
  return db
    .prepare(
      `SELECT seq, through_event AS through, through_hash AS hash, first_hash AS first,
              archive_sha256 AS archiveSha256, ts, mac FROM checkpoints ORDER BY seq`,
    )
    .all() as Checkpoint[];
}

/** The newest checkpoint, or undefined. */
export const newestCheckpoint = (db: SqliteDb): Checkpoint | undefined => readCheckpoints(db).at(-1);

/** What is wrong with the checkpoints under `key`: numbering, order, signatures. [] when they hold. */
export function checkCheckpoints(key: Buffer, checkpoints: readonly Checkpoint[]): string[] {
  const problems: string[] = [];
  checkpoints.forEach((c, i) => {
    const previous = checkpoints[i - 1];
    if (c.seq !== i + 1) problems.push(`checkpoint #${c.seq} is number ${i + 1}: one was removed`);
    if (previous !== undefined && c.through <= previous.through)
      problems.push(`checkpoint #${c.seq} does not come after #${previous.seq}`);
    if (!isCheckpointSigned(key, c, previous))
      problems.push(`checkpoint #${c.seq} (events 1-${c.through}) is NOT SIGNED with this key`);
  });
  return problems;
}
