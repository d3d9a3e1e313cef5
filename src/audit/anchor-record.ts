import { createHmac, timingSafeEqual } from 'node:crypto';
import { canonicalJson } from '../canonical-json.js';

/**
 * A signed statement about the audit chain at one moment: it held `events` events, the last one hashing to
 * `head` and the first to `first` (both the genesis hash for an empty log). `seq` numbers the anchors 1, 2, 3, … so
 * that a line deleted from the anchor file leaves a gap. `reanchored` marks the anchor `audit reanchor` writes when
 * an operator accepts the log as it stands and sets the earlier anchors aside; the count goes on from them. `mac`
 * is HMAC-SHA256 over the canonical JSON of the other fields, with a key kept outside the database, so whoever can
 * only write the database and the anchor file cannot make an anchor that matches a rewritten chain.
 *
 * `marks_from` (anchors written since writer marks exist): from that event on, an event is vouched for only by a
 * writer mark (`writer-mark.ts`), whatever anchors cover it; the events before it, by the anchors alone (they were
 * written before marks, or accepted by `audit reanchor`).
 *
 * The database keeps a copy of the newest anchor, signed for that purpose (`copy`): a line of the file cannot stand
 * in for it, so rolling the copy back to an older anchor needs an old copy of the database, not just the file.
 */
export interface AnchorRecord {
  v: 2;
  seq: number;
  ts: number;
  events: number;
  head: string;
  first: string;
  reanchored?: true;
  marks_from?: number;
  mac: string;
}

export type UnsignedAnchor = Omit<AnchorRecord, 'mac'>;

/** Where a record is kept: the anchor file, or the database's copy of the newest one. */
export type AnchorPurpose = 'file' | 'copy';

const HEX64 = /^[0-9a-f]{64}$/;
const macOf = (key: Buffer, a: UnsignedAnchor, purpose: AnchorPurpose) =>
  createHmac('sha256', key)
    .update(purpose === 'file' ? 'skills-mcp audit anchor v2\0' : 'skills-mcp audit anchor copy v2\0', 'utf8')
    .update(
      canonicalJson({
        v: a.v,
        seq: a.seq,
        ts: a.ts,
        events: a.events,
        head: a.head,
        first: a.first,
        ...(a.reanchored === true ? { reanchored: true } : {}),
        ...(a.marks_from === undefined ? {} : { marks_from: a.marks_from }),
      }),
      'utf8',
    )
    .digest('hex');

export const signAnchor = (
  key: Buffer,
  a: UnsignedAnchor,
  purpose: AnchorPurpose = 'file',
): AnchorRecord => ({
  ...a,
  mac: macOf(key, a, purpose),
});

/** Whether two records state the same thing (whatever they were signed for). */
export const sameAnchor = (a: UnsignedAnchor, b: UnsignedAnchor): boolean =>
  a.seq === b.seq &&
  a.ts === b.ts &&
  a.events === b.events &&
  a.head === b.head &&
  a.first === b.first &&
  a.reanchored === b.reanchored &&
  a.marks_from === b.marks_from;

const count = (n: unknown, min: number) => Number.isSafeInteger(n) && (n as number) >= min;

/** The record on one line of an anchor file, or why it is not one. Never throws. */
export function parseAnchor(line: string): AnchorRecord | string {
  let v: unknown;
  try {
    v = JSON.parse(line);
  } catch {
    return 'not JSON';
  }
  const a = v as Partial<AnchorRecord> | null;
  if (
    a === null ||
    typeof a !== 'object' ||
    a.v !== 2 ||
    !count(a.seq, 1) ||
    !count(a.ts, 0) ||
    !count(a.events, 0) ||
    (a.reanchored !== undefined && a.reanchored !== true) ||
    (a.marks_from !== undefined && !count(a.marks_from, 1)) ||
    ![a.head, a.first, a.mac].every((h) => typeof h === 'string' && HEX64.test(h))
  )
    return 'not an anchor record';
  return a as AnchorRecord;
}

/** Whether the record was signed with `key` for `purpose` (constant time). */
export function isAnchorSigned(key: Buffer, a: AnchorRecord, purpose: AnchorPurpose = 'file'): boolean {
  return timingSafeEqual(Buffer.from(macOf(key, a, purpose), 'hex'), Buffer.from(a.mac, 'hex'));
}

/** The signed record a text holds, or undefined (no text, not a record, or not signed with `key` for `purpose`). */
export function readSignedAnchor(
  key: Buffer,
  text: string | undefined,
  purpose: AnchorPurpose = 'file',
): AnchorRecord | undefined {
  const a = text === undefined || text === '' ? undefined : parseAnchor(text);
  return typeof a === 'object' && isAnchorSigned(key, a, purpose) ? a : undefined;
}
