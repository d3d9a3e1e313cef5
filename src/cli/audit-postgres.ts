import { isSkillsError } from '../errors.js';
import { describeChain, printable } from './audit-verify.js';
import type { CliIo, ExitCode } from './io.js';
import { jsonText } from './json-text.js';

/** What `audit` can do with a PostgreSQL log so far. */
export const PG_AUDIT_COMMANDS: readonly string[] = ['verify', 'export'];

/**
 * `skills-mcp audit verify|export --audit postgres://…`: the chain of the PostgreSQL log, or its events as JSON
 * lines. The password comes from PGPASSWORD or a password file (PGPASSFILE, ~/.pgpass); the URL is only ever
 * printed without it. Any role that may SELECT the events will do.
 */
export async function runPgAudit(command: string, url: string, io: CliIo, json: boolean): Promise<ExitCode> {
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
      for await (const e of log.exportEvents()) io.out(`${jsonText(e)}\n`);
      return 0;
    }
    const { chain } = await log.verify();
    if (json) {
      io.out(`${printable(JSON.stringify({ ok: chain.ok, database: log.target, chain }, null, 2))}\n`);
      return chain.ok ? 0 : 1;
    }
    const lines = [
      `audit log: ${log.target}`,
      describeChain(chain),
      'anchors: none for a PostgreSQL log: the newest events could have been deleted without a trace (warning)',
    ];
    (chain.ok ? io.out : io.err)(
      `${lines.map(printable).join('\n')}\n${chain.ok ? 'ok' : 'FAILED: the audit log does not verify'}\n`,
    );
    return chain.ok ? 0 : 1;
  } catch (e) {
    const hint = isSkillsError(e) && e.hint ? `\n${e.hint}` : '';
    io.err(`skills-mcp audit: ${(e as Error).message}${hint}\n`);
    return 1;
  } finally {
    await log.close();
  }
}
