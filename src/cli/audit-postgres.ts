import type pg from 'pg';
import type { PgAuditLog } from '../audit/postgres/open-pg-audit-log.js';
import { PG_SCHEMA } from '../audit/postgres/pg-schema.js';
import { isSkillsError } from '../errors.js';
import {
  type AnchorPaths,
  checkAnchorsAt,
  describeAnchors,
  describeChain,
  describePasskeys,
  printable,
} from './audit-verify.js';
import { collectPasskeyRecords } from '../passkeys/passkey-records.js';
import { unbackedApprovers, type UnbackedApprover } from '../passkeys/unbacked-approvers.js';
import { verifyPasskeyApprovals } from '../passkeys/verify-passkey-approvals.js';
import { finishExport, writeAnchorRecords, type ExportOptions } from './audit-export.js';
import type { CliIo, ExitCode } from './io.js';
import { jsonText } from './json-text.js';

/** What `audit` can do with a PostgreSQL log so far. */
export const PG_AUDIT_COMMANDS: readonly string[] = ['verify', 'export'];

/**
 * `skills-mcp audit verify|export --audit postgres://…`: the chain of the PostgreSQL log (and its anchors, when an
 * anchor file and key are given), or its events as JSON lines. The password comes from PGPASSWORD or a password
 * file (PGPASSFILE, ~/.pgpass); the URL is only ever printed without it. Any role that may SELECT the log will do.
 * `verify` also checks every passkey approval against the enrolments in the log, as on SQLite
 * (`verifyPasskeyApprovals`), and that each passkey of the approvers table is backed by one (`unbackedApprovers`),
 * both read from one snapshot.
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
    // Passkey approvals are read from the events: a chain that does not verify (an edited or malformed event)
    // already fails, and its events are not read again.
    const checked = chain.ok ? await checkPgPasskeys(log) : undefined;
    const ok =
      chain.ok &&
      (anchors === undefined || anchors.status === 'ok' || anchors.status === 'none') &&
      checked !== undefined &&
      checked.passkeys.failures.length === 0 &&
      checked.approvers.length === 0;
    if (opts.json) {
      const report = {
        ok,
        database: log.target,
        chain,
        ...(anchors === undefined ? {} : { anchors }),
        ...(checked === undefined ? {} : checked),
      };
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
      ...(checked === undefined
        ? ['passkeys: not checked (the chain does not verify)']
        : [...describePasskeys(checked.passkeys), ...describeApprovers(checked.approvers)]),
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

/** The passkey approvals checked against the log's enrolments, and the approvers table against them (one snapshot). */
async function checkPgPasskeys(log: PgAuditLog) {
  const records = collectPasskeyRecords();
  let rows: unknown[] = [];
  const readRows = async (client: pg.PoolClient) => {
    const table = `${PG_SCHEMA}.approvers`;
    const exists = await client.query<{ t: string | null }>('SELECT to_regclass($1)::text AS t', [table]);
    if (exists.rows[0]?.t == null) return;
    rows = (
      await client.query<{ record: unknown }>(`SELECT record FROM ${table} ORDER BY credential_id`)
    ).rows.map((r) => r.record);
  };
  for await (const e of log.exportEvents(readRows)) records.add(e);
  const found = records.done();
  return { passkeys: await verifyPasskeyApprovals(found), approvers: unbackedApprovers(found.changes, rows) };
}

/** The lines `audit verify` prints about the approvers table of a PostgreSQL log. */
function describeApprovers(unbacked: readonly UnbackedApprover[]): string[] {
  if (unbacked.length === 0) return ['approvers table: ok, each passkey in it is enrolled in the log'];
  return [
    `approvers table: ${unbacked.length} passkey${unbacked.length === 1 ? '' : 's'} NOT BACKED by the log's enrolments`,
    ...unbacked.map((u) => `  passkey ${u.credentialId}: ${u.reason}`),
  ];
}
