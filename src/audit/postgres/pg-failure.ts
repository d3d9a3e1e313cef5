import { SkillsError, isSkillsError } from '../../errors.js';

/** SQLSTATEs that mean the server went away or is not taking connections: connection exceptions, shutdown. */
const GONE = /^(08|57P0[1-3])/;

/**
 * The AUDIT_FAILED error for a PostgreSQL failure while `doing` something. The message names the cause (the server's
 * own message, or the connection error's code) and never the URL or its password. `inDoubt` marks a COMMIT whose
 * answer was lost: the events may be stored, and the step they record must still not be taken.
 */
export function pgFailure(doing: string, err: unknown, opts: { inDoubt?: boolean } = {}): SkillsError {
  if (isSkillsError(err)) return err;
  const e = err as { code?: string; message?: string; severity?: unknown };
  const code = e.code ?? 'unknown';
  // Only the server's own errors carry a severity; socket errors (ECONNREFUSED, EPIPE, …) mean it is gone.
  const refused = typeof e.severity === 'string' && !GONE.test(code);
  const why = refused
    ? `the database refused it (${code}): ${e.message ?? ''}`
    : `the audit database is unreachable (${code === 'unknown' ? (e.message ?? code) : code})`;
  return new SkillsError('AUDIT_FAILED', `audit log (PostgreSQL): cannot ${doing}: ${why}`, {
    hint: opts.inDoubt
      ? 'The connection broke during COMMIT: the events may or may not be stored. Do not go on with the step they record; `skills-mcp audit verify` checks the log.'
      : refused
        ? 'Nothing was written. Check the role the server connects as, its password, and its grants (INSERT and SELECT on the audit table).'
        : 'Nothing was written; do not go on with the step it records. Check that PostgreSQL runs and accepts connections.',
    details: { sqlstate: code },
    cause: err,
  });
}
