import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { loadAnchorKey } from '../audit/anchor-key.js';
import { defaultAuditPath } from '../audit/default-audit-path.js';
import type { Config } from '../config/config-schema.js';
import type { CliIo } from './io.js';
import { isPostgresUrl, redactPostgresUrl } from '../audit/postgres/postgres-url.js';

/** `--audit` / `audit:` / SKILLS_MCP_AUDIT, else the platform default (see default-audit-path.ts). */
export const resolveAuditPath = (config: Config, io: CliIo): string =>
  config.audit ?? defaultAuditPath({ env: io.env, platform: process.platform, home: homedir() });

/**
 * Where this server's local state goes beside (call folders, environments, bundle copies, console links): the SQLite
 * audit file, or for a PostgreSQL log the default audit file's place.
 */
export const resolveLocalBase = (config: Config, io: CliIo): string =>
  config.audit !== undefined && isPostgresUrl(config.audit)
    ? defaultAuditPath({ env: io.env, platform: process.platform, home: homedir() })
    : resolveAuditPath(config, io);

/** Takes `--audit PATH` / `--audit=PATH` and `--config FILE` out of a subcommand's args. */
export function takeGlobalFlags(args: string[]): { rest: string[]; audit?: string; config?: string } {
  const rest: string[] = [];
  const found: { audit?: string; config?: string } = {};
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    const m = /^--(audit|config)(?:=(.*))?$/.exec(a);
    if (m === null) {
      rest.push(a);
      continue;
    }
    const value = m[2] ?? args[++i];
    if (value !== undefined) found[m[1] as 'audit' | 'config'] = value;
  }
  return { rest, ...found };
}

/** Where the audit anchors and their key are: `audit_anchors.file` / `.key_file`, else beside the database. */
export const resolveAnchorPaths = (config: Config, auditPath: string): { file: string; keyFile: string } => ({
  file: config.audit_anchors.file ?? `${auditPath}.anchors`,
  keyFile: config.audit_anchors.key_file ?? join(dirname(auditPath), 'audit-anchor.key'),
});

/**
 * The anchor key to mark this process's audit events with (`writerKey` of `openAuditStore`), looked for inside each
 * append's transaction: a server starting meanwhile makes its key before it checks the log under the same lock, so
 * an event is either marked or already in the log that server accepts. A missing key is not made here: the server
 * makes it, with its anchor file, and then accepts what the log holds.
 */
export function writerKeyOf(config: Config, auditPath: string): { writerKey: () => Buffer | undefined } {
  const { keyFile } = resolveAnchorPaths(config, auditPath);
  return { writerKey: () => (existsSync(keyFile) ? loadAnchorKey(keyFile, { create: false }) : undefined) };
}

/** Where per-call output folders go: `data_dir`, else `runs/` beside the audit database. */
export const resolveRunsDir = (config: Config, auditPath: string): string =>
  config.data_dir ?? join(dirname(auditPath), 'runs');

/** Where the verified copies of skill bundles go: `bundles/` in `data_dir`, else beside the audit database. */
export const resolveBundlesDir = (config: Config, auditPath: string): string =>
  join(config.data_dir ?? dirname(auditPath), 'bundles');

/**
 * For the commands that need the audit log as a local SQLite file (runs, bundles, deps): when the
 * configured log is a PostgreSQL URL, prints why not (a `path: message` line) and returns true (exit 2). They never
 * fall back to a SQLite file on their own.
 */
export function refusePostgresAudit(config: Config, io: CliIo, command: string): boolean {
  if (config.audit === undefined || !isPostgresUrl(config.audit)) return false;
  io.err(
    `skills-mcp: invalid configuration\n  audit: ${redactPostgresUrl(config.audit)}: ${command} cannot use a PostgreSQL audit log yet ` +
      '(it writes its audit log to a SQLite file only; `skills-mcp serve` can write to PostgreSQL); `skills-mcp audit verify|export` read a PostgreSQL log. ' +
      'Give --audit a file path, or leave it out for the default.\n',
  );
  return true;
}
