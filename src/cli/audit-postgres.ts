import { isSkillsError } from '../errors.js';
import {
  type AnchorPaths,
  checkAnchorsAt,
  describeAnchors,
  describeChain,
  printable,
} from './audit-verify.js';
import { finishExport, writeAnchorRecords, type ExportOptions } from './audit-export.js';
import type { CliIo, ExitCode } from './io.js';
import { jsonText } from './json-text.js';

/** What `audit` can do with a PostgreSQL log so far. */
export const PG_AUDIT_COMMANDS: readonly string[] = ['verify', 'export'];

/**
 * `skills-mcp audit verify|export --audit postgres://…`: the chain of the PostgreSQL log (and its anchors, when an
 * anchor file and key are given), or its events as JSON lines. The password comes from PGPASSWORD or a password
 * file (PGPASSFILE, ~/.pgpass); the URL is only ever printed without it. Any role that may SELECT the log will do.
 */
export async function runPgAudit(
  command: string,
  url: string,
  io: CliIo,
  opts: { json: boolean; anchors: AnchorPaths | undefined; export?: ExportOptions },
): Promise<ExitCode> {
  const { openPgAuditLog } = await import('../audit/postgres/open-pg-audit-log.js');
  let log;
  try {
    log = openPgAuditLog({ url, env: io.env, max: 1 });
  } catch (e) {
    io.err(`skills-mcp audit: ${(e as Error).message}\n`);
    return 2;
  }
  try {
    if (command === 'export') {
      // The chain is walked first, in a snapshot of its own: events appended meanwhile are exported unchecked.
      const { chain, lastAnchor } = await log.verify();
      let events = 0;
      for await (const e of log.exportEvents()) {
        io.out(`${jsonText(e)}\n`);
        events++;
      }
      const o = opts.export ?? { anchorFile: undefined, allowBroken: false };
      if (o.anchorFile !== undefined) writeAnchorRecords(io, o.anchorFile, lastAnchor, []);
      return finishExport(io, chain, events, o);
    }
    const { chain, hashes, lastAnchor } = await log.verify();
    const paths = opts.anchors;
    const anchors =
      paths === undefined
        ? undefined
        : checkAnchorsAt(
            { lastAnchor: () => lastAnchor, hashAt: (id) => hashes[id - 1] },
            chain.events,
            paths,
          );
    const ok = chain.ok && (anchors === undefined || anchors.status === 'ok' || anchors.status === 'none');
    if (opts.json) {
      const report = { ok, database: log.target, chain, ...(anchors === undefined ? {} : { anchors }) };
      io.out(`${printable(JSON.stringify(report, null, 2))}\n`);
      return ok ? 0 : 1;
    }
    const lines = [
      `audit log: ${log.target}`,
      describeChain(chain),
      ...(anchors === undefined || paths === undefined
        ? [
            'anchors: none given (--anchors FILE --anchor-key FILE): the newest events could have been deleted without a trace (warning)',
          ]
        : describeAnchors(anchors, chain.events, paths.file)),
    ];
    (ok ? io.out : io.err)(
      `${lines.map(printable).join('\n')}\n${ok ? 'ok' : 'FAILED: the audit log does not verify'}\n`,
    );
    return ok ? 0 : 1;
  } catch (e) {
    const hint = isSkillsError(e) && e.hint ? `\n${e.hint}` : '';
    io.err(`skills-mcp audit: ${(e as Error).message}${hint}\n`);
    return 1;
  } finally {
    await log.close();
  }
}
