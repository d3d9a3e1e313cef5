import type { AnchorCheck } from './check-anchors.js';
import { isMarkSigned, type WriterMark } from './writer-mark.js';

/** Which events of a log someone holding the anchor key stands behind, and which nobody does. */
export interface VouchedCheck {
  /** Events 1 to this are vouched for by the anchors alone (written before writer marks, or accepted by reanchor). */
  byAnchors: number;
  /** Events vouched for by a writer mark. */
  byMarks: number;
  /** The events nobody vouches for, as inclusive ranges, the first few. */
  unvouched: [number, number][];
  /** How many events nobody vouches for. */
  unvouchedCount: number;
  /** Marks whose signature does not hold (a mark or its events changed); their events count as unvouched. */
  badMarks: number;
}

const MAX_RANGES = 20;

/**
 * An event is vouched for when a holder of the anchor key says it wrote it: a writer mark covers it, or it comes
 * before the newest anchor's `marks_from` and a matching anchor covers it (the part of the log from before writer
 * marks, or accepted by `audit reanchor`). Linking to the chain is not enough: whoever can write the database can
 * append events that link. Call it only with anchors that verified (`status: 'ok'`).
 */
export function checkVouched(
  anchors: AnchorCheck,
  marks: readonly WriterMark[],
  key: Buffer,
  chain: { events: number; hashAt(eventId: number): string | undefined; archived?: number },
): VouchedCheck {
  const from = anchors.marksFrom ?? Number.POSITIVE_INFINITY;
  // Archived events are vouched for by the signed checkpoint (and, in the archive, by their own marks).
  const byAnchors = Math.min(
    chain.events,
    Math.max(anchors.reanchored?.events ?? 0, chain.archived ?? 0, Math.min(from - 1, anchors.covered)),
  );
  let badMarks = 0;
  const good = marks
    .filter((m) => {
      if (m.last > chain.events) return false; // newer than this snapshot: not the log being checked
      // Inside what the anchors vouch for alone: a reanchor accepted those events as they stand, so a mark signed
      // over what they were before is no longer the evidence for them.
      if (m.last <= byAnchors) return false;
      const ok = isMarkSigned(key, m, chain.hashAt(m.last));
      if (!ok) badMarks++;
      return ok;
    })
    .sort((a, b) => a.first - b.first);
  const unvouched: [number, number][] = [];
  let unvouchedCount = 0;
  let byMarks = 0;
  let next = byAnchors + 1; // the first event not yet known to be vouched for
  const gap = (to: number) => {
    if (to < next) return;
    unvouchedCount += to - next + 1;
    if (unvouched.length < MAX_RANGES) unvouched.push([next, to]);
  };
  for (const m of good) {
    if (m.last < next) continue;
    gap(m.first - 1);
    byMarks += m.last - Math.max(next, m.first) + 1;
    next = m.last + 1;
  }
  gap(chain.events);
  return { byAnchors, byMarks, unvouched, unvouchedCount, badMarks };
}
