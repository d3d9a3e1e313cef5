import { archiveLog } from '../audit/archive-log.js';
import type { AuditStore } from '../audit/audit-store.js';
import type { AnchorPaths } from './audit-verify.js';
import type { CliIo, ExitCode } from './io.js';

export interface ArchiveCliOptions {
  out: string;
  olderThanDays: number;
  dryRun: boolean;
}

const DAY_MS = 86_400_000;

/**
 * Only for the crash test: with this variable set to 1, the prune announces itself on stderr and waits a minute
 * inside its transaction, so the test can kill the process there. Not reachable from any config.
 */
const PAUSE_ENV = 'SKILLS_MCP_TEST_PAUSE_PRUNE';

const pauseForTest = (io: CliIo) => () => {
  if (process.env[PAUSE_ENV] !== '1') return;
  io.err('prune: paused before commit\n');
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 60_000);
};

/** `audit archive --older-than DAYS --out FILE [--dry-run]`: archives and prunes old sessions (`archiveLog`). */
export function auditArchive(
  store: AuditStore,
  io: CliIo,
  paths: AnchorPaths,
  o: ArchiveCliOptions,
): ExitCode {
  const r = archiveLog({
    store,
    keyFile: paths.keyFile,
    anchorFile: paths.file,
    out: o.out,
    olderThanMs: o.olderThanDays * DAY_MS,
    dryRun: o.dryRun,
    beforeCommit: pauseForTest(io),
  });
  if (!r.done) {
    io.out(`nothing to archive: ${r.reason}\n`);
    return 0;
  }
  const s = r.summary;
  const what = `events ${s.first}-${s.last} (${s.sessions} session${s.sessions === 1 ? '' : 's'})`;
  if (r.dryRun) {
    io.out(`would archive ${what} to ${o.out} and prune them (dry run: nothing written)\n`);
    return 0;
  }
  io.out(
    [
      `archived ${what} to ${o.out} (sha256 ${r.checkpoint.archiveSha256})`,
      `pruned them from the log: checkpoint #${r.checkpoint.seq} at event ${s.last}, hash ${s.last_hash}`,
      `keep the archive: \`skills-mcp audit verify --archive ${o.out}\` checks it against the checkpoint`,
    ].join('\n') + '\n',
  );
  return 0;
}
