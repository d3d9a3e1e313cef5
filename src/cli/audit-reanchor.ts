import type { AuditStore } from '../audit/audit-store.js';
import { reanchorLog } from '../audit/reanchor-log.js';
import type { AnchorPaths } from './audit-verify.js';
import type { CliIo, ExitCode } from './io.js';

/** `audit reanchor --i-understand`: accepts the log as it stands (see `reanchorLog`) and says what it did. */
export function auditReanchor(store: AuditStore, io: CliIo, paths: AnchorPaths): ExitCode {
  const r = reanchorLog({ store, keyFile: paths.keyFile, file: paths.file });
  if (!r.done) {
    io.out(`anchors verify (${paths.file}): nothing to re-anchor\n`);
    return 0;
  }
  const { record: a } = r;
  io.out(
    [
      `re-anchored: anchor #${a.seq} in ${paths.file} vouches for the log as it stands (${a.events} events, head ${a.head})`,
      ...(r.setAside === undefined ? [] : [`the previous anchor file is kept as ${r.setAside}`]),
      'what happened to the log before cannot be proven by anchors any more; `audit verify` names this re-anchoring',
      'restart the server: it refuses new runs until then',
    ].join('\n') + '\n',
  );
  return 0;
}
