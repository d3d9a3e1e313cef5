import { readAnchorLines } from './anchor-file.js';
import { parseAnchor, type AnchorRecord } from './anchor-record.js';
import type { AuditStore } from './audit-store.js';
import type { AnchorEvidence, ChainView } from './check-anchors.js';
import type { ProjectionDifference } from './compare-projections.js';
import type { VerifyResult } from './types.js';
import type { WriterMark } from './writer-mark.js';
import type { Checkpoint } from './checkpoint.js';
import type { ExportedEvent } from './parse-event-row.js';

/** Everything `audit verify` judges, read so that a log being written cannot look tampered with. */
export interface LogEvidence {
  chain: VerifyResult;
  /** Every event the snapshot holds (more than `chain.events` when the chain is broken). */
  total: number;
  anchors: AnchorEvidence;
  /** The snapshot, as the anchor check sees it; anchors newer than it are checked against the log read after. */
  view: ChainView;
  marks: WriterMark[];
  /** The retention checkpoints, oldest first: the log starts after the newest one. */
  checkpoints: Checkpoint[];
  summary: ProjectionDifference[];
  damage: string[];
}

/**
 * Reads the log from one snapshot (one SQLite read transaction): the chain, the summary tables, the writer marks and
 * the copy of the newest anchor. The anchor file is read inside it, once the snapshot is taken, so it holds every
 * anchor the snapshot's copy names; it may also hold anchors written since. Those that name more events than the
 * snapshot holds are checked after it, against the log as it is then: it must still hold that event with that hash,
 * and the snapshot's last event with its hash. A cut tail fails that check (the events are gone from the log read
 * later as well), so it shows as truncation; only anchors the later log bears out count as newer. The copy is read
 * again after the file, so anchors written in between do not look like a rolled-back copy. `visit`, when given, sees
 * every event of the same snapshot, in order (up to the first row that does not parse: the chain check names it).
 */
export function readLogEvidence(
  store: AuditStore,
  anchorFile: string,
  visit?: (e: ExportedEvent) => void,
): LogEvidence {
  const hashes = new Map<number, string | undefined>();
  const hashAt = (id: number) => {
    if (!hashes.has(id)) hashes.set(id, store.hashAt(id));
    return hashes.get(id);
  };
  const taken = store.readSnapshot(() => {
    const chain = store.verify(); // its first read takes the snapshot
    const lines = readAnchorLines(anchorFile);
    const total = store.eventCount();
    hashAt(1);
    hashAt(total);
    for (const text of lines ?? []) {
      const a = parseAnchor(text);
      if (typeof a === 'object') hashAt(a.events);
    }
    const marks = store.writerMarks();
    const checkpoints = store.checkpoints();
    for (const m of marks) hashAt(m.last);
    let summary: ProjectionDifference[];
    try {
      summary = store.compareProjections();
    } catch (e) {
      summary = [{ table: 'calls', key: '-', stored: 'unreadable events', rebuilt: (e as Error).message }];
    }
    let damage: string[];
    try {
      damage = store.checkFile();
    } catch (e) {
      damage = [(e as Error).message];
    }
    if (visit !== undefined) {
      try {
        for (const e of store.exportEvents()) visit(e);
      } catch {
        // A row that does not parse: the chain check above reports it.
      }
    }
    return { chain, lines, total, copy: store.lastAnchor(), marks, checkpoints, summary, damage };
  });
  const copyNow = store.lastAnchor();
  const frozen = new Map(hashes);
  const head = frozen.get(taken.total);
  const newer = (a: AnchorRecord) =>
    store.hashAt(a.events) === a.head && (taken.total === 0 || store.hashAt(taken.total) === head);
  return {
    chain: taken.chain,
    total: taken.total,
    anchors: { lines: taken.lines, copy: taken.copy, copyNow },
    view: {
      events: taken.total,
      hashAt: (id) => frozen.get(id),
      newer,
      archived: taken.checkpoints.at(-1)?.through ?? 0,
    },
    marks: taken.marks,
    checkpoints: taken.checkpoints,
    summary: taken.summary,
    damage: taken.damage,
  };
}
