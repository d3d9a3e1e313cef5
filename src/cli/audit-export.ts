import { readAnchorLines } from '../audit/anchor-file.js';
import { parseAnchor } from '../audit/anchor-record.js';
import type { AuditStore } from '../audit/audit-store.js';
import type { VerifyResult } from '../audit/types.js';
import type { WriterMark } from '../audit/writer-mark.js';
import { describeChain } from './audit-verify.js';
import type { CliIo, ExitCode } from './io.js';
import { jsonText } from './json-text.js';

export interface ExportOptions {
  /** The anchor file whose lines go out after the events; undefined: events only. */
  anchorFile: string | undefined;
  /** Exit 0 on a broken chain (still warned about on stderr). */
  allowBroken: boolean;
}

/**
 * Lines after the events, each an object with a `record` field, which event lines never have:
 * `{"record":"anchor","line":N,…the anchor's fields…}` per line of the anchor file (`"record":"anchor_line"` with
 * `text` for a line that is not an anchor), `{"record":"anchor_copy",…}` for the database's copy of the newest
 * anchor, `{"record":"writer_mark","first":…,"last":…,"mac":…}` per writer mark, and last
 * `{"record":"export_summary","events":N,"chain":"ok"|"broken",…}`.
 */
export const EXPORT_RECORDS = ['anchor', 'anchor_line', 'anchor_copy', 'writer_mark', 'export_summary'];

/**
 * `audit export --jsonl`: every event from one snapshot, in chain order, then (unless told not to) the anchors and
 * writer marks as they stood with it, so an outside reader can check what the anchors vouch for. The chain is walked
 * in the same snapshot: a broken one is said on stderr and, unless `--allow-broken`, exits 1 after the export.
 */
export function auditExport(store: AuditStore, io: CliIo, o: ExportOptions): ExitCode {
  const { chain, total } = store.readSnapshot((): { chain: VerifyResult; total: number } => {
    const result = { chain: store.verify(), total: store.eventCount() }; // the first read takes the snapshot
    for (const e of store.exportEvents()) io.out(`${jsonText(e)}\n`);
    if (o.anchorFile !== undefined)
      writeAnchorRecords(io, o.anchorFile, store.lastAnchor(), store.writerMarks());
    return result;
  });
  return finishExport(io, chain, total, o);
}

/** The anchor file's lines, the database's copy of the newest anchor and the writer marks, as record lines. */
export function writeAnchorRecords(
  io: CliIo,
  file: string,
  copy: string | undefined,
  marks: readonly WriterMark[],
): void {
  (readAnchorLines(file) ?? []).forEach((text, i) => {
    const a = parseAnchor(text);
    const line = i + 1;
    io.out(
      `${jsonText(typeof a === 'string' ? { record: 'anchor_line', line, text } : { record: 'anchor', line, ...a })}\n`,
    );
  });
  if (copy !== undefined) {
    const a = parseAnchor(copy);
    io.out(
      `${jsonText(typeof a === 'string' ? { record: 'anchor_copy', text: copy } : { record: 'anchor_copy', ...a })}\n`,
    );
  }
  for (const m of marks) io.out(`${jsonText({ record: 'writer_mark', ...m })}\n`);
}

/** The summary line (with anchors), and the warning and exit code for a broken chain. */
export function finishExport(io: CliIo, chain: VerifyResult, total: number, o: ExportOptions): ExitCode {
  if (o.anchorFile !== undefined) {
    const broken = chain.ok ? {} : { bad_event_id: chain.badEventId, reason: chain.reason };
    io.out(
      `${jsonText({ record: 'export_summary', events: total, chain: chain.ok ? 'ok' : 'broken', ...broken })}\n`,
    );
  }
  if (chain.ok) return 0;
  io.err(
    `skills-mcp audit export: warning: ${describeChain(chain, total)}\n` +
      (o.allowBroken
        ? 'exported anyway (--allow-broken)\n'
        : 'the export holds every event, but the log does not verify: run `skills-mcp audit verify`. ' +
          'Say --allow-broken to export a broken log with exit 0.\n'),
  );
  return o.allowBroken ? 0 : 1;
}
