import { existsSync } from 'node:fs';
import { loadAnchorKey } from '../audit/anchor-key.js';
import { checkArchive, readArchiveFile } from '../audit/archive-file.js';
import { checkCheckpoints, type Checkpoint } from '../audit/checkpoint.js';
import { GENESIS_HASH } from '../audit/event-hash.js';
import { isSkillsError } from '../errors.js';

export interface RetentionReport {
  ok: boolean;
  /** Events 1 to this were archived and pruned (0: none). */
  archived: number;
  checkpoints: { problems: string[]; newest?: Omit<Checkpoint, 'mac'> };
  archive?: { file: string; ok: boolean; problems: string[]; sha256?: string; first?: number; last?: number };
  lines: string[];
}

const iso = (ts: number) => new Date(ts).toISOString();

/**
 * What `audit verify` says about retention: each checkpoint signed with the anchor key (in order, none removed),
 * and, with `archiveFile`, that archive checked alone (chain, summary, marks, anchors) and against the checkpoint
 * naming its sha256: its last event and hash are the checkpoint's, its first `prev_hash` the previous one's, so the
 * archives and the log form one chain.
 */
export function judgeRetention(
  checkpoints: readonly Checkpoint[],
  keyFile: string,
  archiveFile: string | undefined,
): RetentionReport {
  const newest = checkpoints.at(-1);
  const shown = newest === undefined ? undefined : (({ mac: _mac, ...rest }) => rest)(newest);
  const report: RetentionReport = {
    ok: true,
    archived: newest?.through ?? 0,
    checkpoints: {
      problems: [],
      ...(shown === undefined ? {} : { newest: shown }),
    },
    lines: [],
  };
  if (checkpoints.length === 0 && archiveFile === undefined) return report;
  let key: Buffer | undefined;
  try {
    key = existsSync(keyFile) ? loadAnchorKey(keyFile, { create: false }) : undefined;
  } catch (e) {
    report.checkpoints.problems.push(isSkillsError(e) ? e.message : String(e));
  }
  if (key === undefined && report.checkpoints.problems.length === 0)
    report.checkpoints.problems.push(`no anchor key at ${keyFile} to check them with`);
  if (key !== undefined) report.checkpoints.problems.push(...checkCheckpoints(key, checkpoints));
  if (newest !== undefined) {
    if (report.checkpoints.problems.length === 0)
      report.lines.push(
        `checkpoint: ok, events 1-${newest.through} archived (checkpoint #${newest.seq} of ${iso(newest.ts)}, ` +
          `archive sha256 ${newest.archiveSha256})`,
      );
    else {
      report.ok = false;
      report.lines.push(
        `checkpoint: FAILED, events 1-${newest.through} pruned under checkpoints that do not verify:`,
        ...report.checkpoints.problems.map((p) => `  ${p}`),
      );
    }
  }
  if (archiveFile !== undefined) {
    report.archive = judgeArchive(archiveFile, key, checkpoints);
    report.ok &&= report.archive.ok;
    const a = report.archive;
    report.lines.push(
      a.ok
        ? `archive: ok, events ${a.first}-${a.last} of ${archiveFile} (sha256 ${a.sha256}) chain into the log`
        : `archive: FAILED, ${archiveFile}:`,
      ...a.problems.map((p) => `  ${p}`),
    );
  }
  return report;
}

function judgeArchive(
  file: string,
  key: Buffer | undefined,
  checkpoints: readonly Checkpoint[],
): NonNullable<RetentionReport['archive']> {
  let check;
  try {
    check = checkArchive(readArchiveFile(file), key);
  } catch (e) {
    return { file, ok: false, problems: [(e as Error).message] };
  }
  const problems = [...check.problems];
  if (key === undefined) problems.push('no anchor key: its writer marks and anchors are not checked');
  const i = checkpoints.findIndex((c) => c.archiveSha256 === check.sha256);
  const s = check.summary;
  if (i < 0)
    problems.push(
      `no checkpoint of this log names its sha256 ${check.sha256}: it was changed, or is another log's`,
    );
  else if (s !== undefined) {
    const c = checkpoints[i]!;
    const before = checkpoints[i - 1];
    if (s.last !== c.through || s.last_hash !== c.hash)
      problems.push(`it ends at event ${s.last}, checkpoint #${c.seq} at ${c.through} with another hash`);
    if (s.first !== (before?.through ?? 0) + 1 || s.prev_hash !== (before?.hash ?? GENESIS_HASH))
      problems.push(`it does not start where checkpoint #${before?.seq ?? 0} left off`);
  }
  return {
    file,
    ok: problems.length === 0,
    problems,
    sha256: check.sha256,
    ...(s === undefined ? {} : { first: s.first, last: s.last }),
  };
}
