import { type AnchorRecord, isAnchorSigned, parseAnchor, sameAnchor } from './anchor-record.js';
import { GENESIS_HASH } from './event-hash.js';

export type AnchorProblemKind =
  | 'missing'
  | 'malformed'
  | 'bad_signature'
  | 'truncated'
  | 'rewritten'
  | 'lines_deleted'
  | 'out_of_sequence'
  | 'replaced'
  | 'copy_behind';

export interface AnchorProblem {
  /** 1-based line of the anchor file; absent when the problem is the file as a whole or the database's copy. */
  line?: number;
  kind: AnchorProblemKind;
  detail: string;
}

type AnchorPoint = Pick<AnchorRecord, 'seq' | 'ts' | 'events'>;

export interface AnchorCheck {
  status: 'ok' | 'tampered';
  /** Anchors that are signed with the key and match the database. */
  matched: number;
  /** The newest matching anchor: the log is proven up to its event count and time. */
  latest?: AnchorPoint;
  /** The newest anchor `audit reanchor` wrote: what happened before it is no longer proven. */
  reanchored?: AnchorPoint;
  /** The most events any matching anchor covers (0 when none matches). */
  covered: number;
  /** `marks_from` of the newest matching anchor that has one: from that event on, only writer marks vouch. */
  marksFrom?: number;
  problems: AnchorProblem[];
}

/** What the check needs of the audit log: its event count and the hash of one event. */
export interface ChainView {
  events: number;
  hashAt(eventId: number): string | undefined;
  /**
   * For a log read while it is written: whether an anchor naming more events than this view holds is newer than the
   * view (the log, read again after the view and the anchor file, still holds that event with that hash). Without
   * it, such an anchor is truncation.
   */
  newer?(a: AnchorRecord): boolean;
  /**
   * Events 1 to this were archived and pruned (the newest checkpoint's): an anchor up to them is checked against
   * event 1 and the checkpoint's hash only; its head is in the archive (`audit verify --archive`).
   */
  archived?: number;
}

/** The two places anchors are kept: the file (the proof) and the database's copy of the newest one (a witness). */
export interface AnchorEvidence {
  /** The anchor file's lines; undefined when there is no file. */
  lines: string[] | undefined;
  /** The copy of the newest anchor the database keeps (`AuditStore.lastAnchor`), or undefined. */
  copy: string | undefined;
  /**
   * For a live log: the copy read again after the file (the snapshot's `copy` was read before it). The file may
   * be at most one anchor ahead of this one; anchors written between the snapshot and the file read are not a
   * rolled-back copy.
   */
  copyNow?: string | undefined;
}

const MAX_PROBLEMS = 20;
const when = (a: AnchorPoint) => `anchor #${a.seq} of ${new Date(a.ts).toISOString()}`;

/**
 * Checks the anchors against the audit chain. Every line must be signed with `key`, numbered one after the other,
 * and name events that still exist and hash as recorded: a missing event is truncation, a different hash a rewrite,
 * a gap in the numbers a deleted line. The database keeps a copy of the newest anchor written (signed as a copy, in
 * the same transaction as the file append): the file must hold that anchor, and may be at most one anchor ahead of
 * it (a crash between the append and the commit), so lines cut from the end of the file, or the copy removed or
 * rolled back, show too. A missing or empty file fails when the log holds events or the copy exists.
 */
export function checkAnchors(evidence: AnchorEvidence, key: Buffer, chain: ChainView): AnchorCheck {
  const problems: AnchorProblem[] = [];
  const problem = (p: AnchorProblem) => {
    if (problems.length < MAX_PROBLEMS) problems.push(p);
  };
  const bySeq = new Map<number, AnchorRecord>();
  let matched = 0;
  let previous: AnchorRecord | undefined;
  let latest: AnchorPoint | undefined;
  let reanchored: AnchorPoint | undefined;
  let covered = 0;
  let marksFrom: { seq: number; from: number } | undefined;
  (evidence.lines ?? []).forEach((text, i) => {
    const line = i + 1;
    const a = parseAnchor(text);
    if (typeof a === 'string') return problem({ line, kind: 'malformed', detail: a });
    if (!isAnchorSigned(key, a))
      return problem({ line, kind: 'bad_signature', detail: 'not signed with this key' });
    const expected = (previous?.seq ?? 0) + 1;
    if (a.seq !== expected && !(a.reanchored === true && a.seq > expected))
      problem({
        line,
        kind: a.seq > expected ? 'lines_deleted' : 'out_of_sequence',
        detail:
          previous === undefined
            ? `the file starts at ${when(a)}: the lines before it were deleted`
            : `${when(a)} follows #${previous.seq}` +
              (a.seq > expected ? ': the lines between were deleted' : ': lines were moved or copied'),
      });
    previous = a;
    bySeq.set(a.seq, a);
    if (a.reanchored === true) reanchored = a;
    if (a.events > chain.events && chain.newer?.(a) === true) return; // newer than the view: not its business
    const mismatch = chainMismatch(a, chain);
    if (mismatch !== undefined) return problem({ line, ...mismatch });
    matched++;
    covered = Math.max(covered, a.events);
    if (a.marks_from !== undefined && (marksFrom === undefined || a.seq > marksFrom.seq))
      marksFrom = { seq: a.seq, from: a.marks_from };
    if (latest === undefined || a.seq > latest.seq) latest = { seq: a.seq, ts: a.ts, events: a.events };
  });

  const copy = evidence.copy === undefined ? undefined : parseAnchor(evidence.copy);
  if (previous === undefined && (chain.events > 0 || copy !== undefined)) {
    const file = evidence.lines === undefined ? 'missing' : 'empty';
    const why = [
      ...(chain.events > 0 ? [`the log holds ${chain.events} events`] : []),
      ...(copy !== undefined ? ['the database records anchors'] : []),
    ];
    problem({ kind: 'missing', detail: `the anchor file is ${file}, yet ${why.join(' and ')}` });
  }
  if (typeof copy === 'string')
    problem({ kind: 'malformed', detail: `the database's copy of the newest anchor: ${copy}` });
  else if (copy !== undefined && !isAnchorSigned(key, copy, 'copy'))
    problem({
      kind: 'bad_signature',
      detail: "the database's copy of the newest anchor is not signed with this key",
    });
  else if (copy !== undefined && previous !== undefined) {
    const inFile = bySeq.get(copy.seq);
    if (inFile === undefined)
      problem({
        kind: 'lines_deleted',
        detail: `the database records ${when(copy)} (${copy.events} events); the file ends at #${previous.seq}`,
      });
    else if (!sameAnchor(inFile, copy))
      problem({
        kind: 'replaced',
        detail: `the file's anchor #${copy.seq} is not the one the database records`,
      });
    else if (previous.seq > Math.max(copy.seq, seqOf(key, evidence.copyNow)) + 1)
      problem({
        kind: 'copy_behind',
        detail: `the file holds anchors up to #${previous.seq}; the database's copy stops at #${copy.seq}: it was rolled back`,
      });
  } else if (
    copy === undefined &&
    previous !== undefined &&
    !(previous.seq === 1 && previous.events === chain.events)
  )
    // Only a crash between the first append and its commit leaves a file without a copy, and then nothing more.
    problem({
      kind: 'copy_behind',
      detail:
        `the database holds no copy of the newest anchor (#${previous.seq}): it was removed` +
        (previous.seq === 1 ? ` (the log grew from ${previous.events} to ${chain.events} events since)` : ''),
    });

  return {
    status: problems.length > 0 ? 'tampered' : 'ok',
    matched,
    ...(latest === undefined ? {} : { latest }),
    ...(reanchored === undefined ? {} : { reanchored }),
    covered,
    ...(marksFrom === undefined ? {} : { marksFrom: marksFrom.from }),
    problems,
  };
}

/** The seq of a signed copy, 0 when there is none. */
const seqOf = (key: Buffer, text: string | undefined): number => {
  const a = text === undefined ? undefined : parseAnchor(text);
  return typeof a === 'object' && isAnchorSigned(key, a, 'copy') ? a.seq : 0;
};

function chainMismatch(a: AnchorRecord, chain: ChainView): Omit<AnchorProblem, 'line'> | undefined {
  if (a.events > chain.events)
    return {
      kind: 'truncated',
      detail: `${when(a)} vouches for ${a.events} events; the log holds ${chain.events}`,
    };
  if (a.events === 0)
    return a.head === GENESIS_HASH && a.first === GENESIS_HASH
      ? undefined
      : { kind: 'rewritten', detail: `${when(a)} names no events but a head hash` };
  if (chain.hashAt(1) !== a.first)
    return { kind: 'rewritten', detail: `event 1 differs from ${when(a)}: the log was rewritten` };
  if (a.events < (chain.archived ?? 0)) return undefined;
  if (chain.hashAt(a.events) !== a.head)
    return {
      kind: 'rewritten',
      detail: `event ${a.events} differs from ${when(a)}: events up to it were changed or re-hashed`,
    };
  return undefined;
}
