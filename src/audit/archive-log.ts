import { escapeForDisplay } from '../escape-for-display.js';
import { SkillsError } from '../errors.js';
import { readAnchorLines } from './anchor-file.js';
import { loadAnchorKey } from './anchor-key.js';
import { parseAnchor } from './anchor-record.js';
import { checkArchive, readArchiveFile, writeArchiveFile, type ArchiveSummary } from './archive-file.js';
import type { AuditStore } from './audit-store.js';
import { checkCheckpoints, signCheckpoint, type Checkpoint } from './checkpoint.js';
import { GENESIS_HASH } from './event-hash.js';
import type { PruneCounts } from './prune-log.js';

export interface ArchiveOptions {
  store: AuditStore;
  keyFile: string;
  anchorFile: string;
  /** The archive to write (must not exist). */
  out: string;
  /** Sessions whose last event is at least this old are archived. */
  olderThanMs: number;
  dryRun: boolean;
  now?: () => number;
  /** Runs inside the prune's transaction, after the deletes, before COMMIT (a test's crash point). */
  beforeCommit?: () => void;
}

export type ArchiveResult =
  | { done: false; reason: string }
  | { done: true; dryRun: true; summary: ArchiveSummary }
  | {
      done: true;
      dryRun: false;
      summary: ArchiveSummary;
      checkpoint: Checkpoint;
      pruned: PruneCounts;
    };

/** One archive line: the export's JSON, with every character that could act on a terminal as `\uXXXX`. */
const jsonText = (value: unknown): string =>
  escapeForDisplay(JSON.stringify(value), { multiline: true, json: true });

const refuse = (message: string, hint?: string) =>
  new SkillsError('AUDIT_FAILED', message, hint === undefined ? {} : { hint });

/**
 * Audit retention: writes the oldest whole sessions that ended more than `olderThanMs` ago (a prefix of the chain,
 * never a hole) to a JSONL archive in the export's shape (events, then the writer marks and anchors covering them,
 * then an `archive_summary`), fsyncs it, checks it by reading it back, and only then, under the write lock, records
 * a checkpoint signed with the anchor key and deletes what it covers, in one transaction. Refuses a log that does
 * not verify. Works beside a running server: the prefix stops before its open sessions, and the prune waits for its
 * writes like any other writer.
 */
export function archiveLog(o: ArchiveOptions): ArchiveResult {
  const { store } = o;
  const now = o.now ?? Date.now;
  const key = loadAnchorKey(o.keyFile, { create: false });
  const plan = store.readSnapshot(() => {
    const chain = store.verify(); // its first read takes the snapshot
    if (!chain.ok)
      throw refuse(
        `the chain is broken at event ${chain.badEventId} (${chain.reason}): nothing archived`,
        'Run `skills-mcp audit verify`; archive only a log that verifies.',
      );
    const checkpoints = store.checkpoints();
    const wrong = checkCheckpoints(key, checkpoints);
    if (wrong.length > 0) throw refuse(`the checkpoints do not verify: ${wrong[0]}; nothing archived`);
    const previous = checkpoints.at(-1);
    const from = (previous?.through ?? 0) + 1;
    const through = store.archivableThrough(now() - o.olderThanMs);
    if (through < from) return undefined;
    const lines: string[] = [];
    const sessions = new Set<string>();
    for (const e of store.exportEvents()) {
      if (e.event_id > through) continue; // read to the end: the statement must finish inside the snapshot
      lines.push(jsonText(e));
      sessions.add(e.session_id);
    }
    const marks = store.writerMarks().filter((m) => m.last >= from && m.last <= through);
    for (const m of marks) lines.push(jsonText({ record: 'writer_mark', ...m }));
    let anchors = 0;
    (readAnchorLines(o.anchorFile) ?? []).forEach((text, i) => {
      const a = parseAnchor(text);
      if (typeof a === 'string' || a.events < from || a.events > through) return;
      lines.push(jsonText({ record: 'anchor', line: i + 1, ...a }));
      anchors++;
    });
    const summary: ArchiveSummary = {
      record: 'archive_summary',
      first: from,
      last: through,
      prev_hash: previous?.hash ?? GENESIS_HASH,
      last_hash: store.hashAt(through)!,
      events: through - from + 1,
      sessions: sessions.size,
      anchors,
      writer_marks: marks.length,
      checkpoint: (previous?.seq ?? 0) + 1,
    };
    lines.push(jsonText(summary));
    return { lines, summary, previous, first: previous?.first ?? store.hashAt(1)! };
  });
  if (plan === undefined) return { done: false, reason: 'no closed session that old follows the last cut' };
  const { summary, previous } = plan;
  if (o.dryRun) return { done: true, dryRun: true, summary };

  writeArchiveFile(o.out, plan.lines);
  const check = checkArchive(readArchiveFile(o.out), key);
  if (check.problems.length > 0 || check.summary?.last_hash !== summary.last_hash)
    throw refuse(
      `the archive ${o.out} does not read back as written (${check.problems[0] ?? 'its last hash differs'}): nothing pruned`,
      'Check the disk; remove the file and archive again.',
    );
  return store.withWriteLock(() => {
    if (store.checkpoints().at(-1)?.seq !== previous?.seq)
      throw refuse(
        'another archive was made meanwhile: nothing pruned',
        `Remove ${o.out} and archive again.`,
      );
    if (store.hashAt(summary.last) !== summary.last_hash)
      throw refuse(`event ${summary.last} changed since it was archived: nothing pruned`);
    const unsigned = {
      seq: summary.checkpoint,
      through: summary.last,
      hash: summary.last_hash,
      first: plan.first,
      archiveSha256: check.sha256,
      ts: now(),
    };
    const checkpoint = signCheckpoint(key, unsigned, previous);
    const pruned = store.prune(checkpoint);
    o.beforeCommit?.();
    return { done: true, dryRun: false, summary, checkpoint, pruned };
  });
}
