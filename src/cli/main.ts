import { dirname } from 'node:path';
import {
  resolveAnchorPaths,
  resolveAuditPath,
  resolveBundlesDir,
  resolveLocalBase,
  resolveRunsDir,
  refusePostgresAudit,
  takeGlobalFlags,
  writerKeyOf,
} from './audit-path.js';
import { isPostgresUrl } from '../audit/postgres/postgres-url.js';
import { HELP } from './help.js';
import type { CliIo, ExitCode } from './io.js';
import { defined, resolveConfig } from './resolve-config.js';
import { runServe } from './serve.js';
import { packageVersion } from '../package-root.js';

/** Dispatches a command. Returns the exit code; never calls process.exit itself. */
export async function main(argv: string[], io: CliIo, stdin: NodeJS.ReadableStream): Promise<ExitCode> {
  const [first, ...rest] = argv;
  if (first === '--version' || first === '-v') {
    io.out(`${packageVersion()}\n`);
    return 0;
  }
  if (first === '--help' || first === '-h' || first === 'help') {
    io.out(`${HELP.main}\n`);
    return 0;
  }
  try {
    switch (first) {
      // Each command's module is loaded when it runs, so `serve` starts without the others.
      case 'lint':
        return (await import('./lint.js')).runLint(rest, io);
      case 'list':
        return (await import('./list.js')).runList(rest, io);
      case 'config':
        return (await import('./client-config.js')).runClientConfig(rest, io);
      case 'audit': {
        const { rest: auditArgs, audit, config } = takeGlobalFlags(rest);
        const loaded = resolveConfig(io, defined({ audit }), config);
        if (loaded === undefined) return 2;
        // Loaded on demand: better-sqlite3 stays off the start-up path of every other command.
        const { runAudit } = await import('./audit.js');
        const auditPath = resolveAuditPath(loaded.config, io);
        const { file, key_file } = loaded.config.audit_anchors;
        return await runAudit(auditArgs, io, {
          auditPath,
          anchors: resolveAnchorPaths(loaded.config, auditPath),
          pgAnchors: defined({ file, keyFile: key_file }),
          sqliteDriver: loaded.config.audit_sqlite_driver,
        });
      }
      case 'runs': {
        const { rest: runsArgs, audit, config } = takeGlobalFlags(rest);
        const loaded = resolveConfig(io, defined({ audit }), config);
        if (loaded === undefined) return 2;
        if (refusePostgresAudit(loaded.config, io, 'runs prune')) return 2;
        const { runRuns } = await import('./runs.js');
        return runRuns(runsArgs, io, {
          runsDir: resolveRunsDir(loaded.config, resolveAuditPath(loaded.config, io)),
          retentionDays: loaded.config.runs.retention_days,
        });
      }
      case 'bundles': {
        const { rest: bundlesArgs, audit, config } = takeGlobalFlags(rest);
        const loaded = resolveConfig(io, defined({ audit }), config);
        if (loaded === undefined) return 2;
        if (refusePostgresAudit(loaded.config, io, 'bundles prune')) return 2;
        const { runBundles } = await import('./bundles.js');
        const auditPath = resolveAuditPath(loaded.config, io);
        return await runBundles(bundlesArgs, io, {
          bundlesDir: resolveBundlesDir(loaded.config, auditPath),
          auditPath,
          sqliteDriver: loaded.config.audit_sqlite_driver,
          retentionDays: loaded.config.runs.bundle_retention_days,
        });
      }
      case 'console': {
        const { rest: consoleArgs, audit, config } = takeGlobalFlags(rest);
        const loaded = resolveConfig(io, defined({ audit }), config);
        if (loaded === undefined) return 2;
        // The links are in the local state folder, also with a PostgreSQL log (which this never opens).
        const { runConsoleLink } = await import('./console-link.js');
        return runConsoleLink(consoleArgs, io, { auditPath: resolveLocalBase(loaded.config, io) });
      }
      case 'approvers': {
        const { rest: approversArgs, audit, config } = takeGlobalFlags(rest);
        const loaded = resolveConfig(io, defined({ audit }), config);
        if (loaded === undefined) return 2;
        const { runApprovers } = await import('./approvers.js');
        // Enrolments are events of the audit log the server writes: in SQLite, recorded here before approvers.json
        // changes; in PostgreSQL, by its approvers table's store, in the transaction that changes the table.
        const c = loaded.config;
        const auditPath = resolveAuditPath(c, io);
        const localBase = resolveLocalBase(c, io);
        const { openApproverStore } = await import('./open-approver-store.js');
        const approvers = await openApproverStore(c, io, dirname(localBase));
        try {
          return await runApprovers(approversArgs, io, {
            localBase,
            logLevel: c.log_level ?? 'warn',
            store: approvers.store,
            audit:
              c.audit !== undefined && isPostgresUrl(c.audit)
                ? undefined
                : { path: auditPath, sqliteDriver: c.audit_sqlite_driver, ...writerKeyOf(c, auditPath) },
          });
        } finally {
          await approvers.close();
        }
      }
      case 'sources': {
        const { runSources } = await import('./sources.js');
        return runSources(rest, io);
      }
      case 'run': {
        const { runRun } = await import('./run.js');
        return await runRun(rest, io, stdin);
      }
      case 'deps': {
        const { runDeps } = await import('./deps.js');
        return await runDeps(rest, io);
      }
      case 'doctor': {
        const { runDoctor } = await import('./doctor.js');
        return await runDoctor(rest, io);
      }
      case 'serve':
        return await runServe(rest, io, stdin);
      default:
        if (first !== undefined && !first.startsWith('-')) {
          io.err(`skills-mcp: unknown command "${first}"\n\n${HELP.main}\n`);
          return 2;
        }
        return await runServe(argv, io, stdin);
    }
  } catch (e) {
    if (e instanceof TypeError && 'code' in e && String(e.code).startsWith('ERR_PARSE_ARGS')) {
      const command = first !== undefined && !first.startsWith('-') ? ` ${first}` : '';
      io.err(`skills-mcp${command}: ${e.message}\nRun "skills-mcp${command} --help" for usage.\n`);
      return 2;
    }
    throw e;
  }
}
