import { dirname, join } from 'node:path';
import type { CallLog } from '../audit/call-log.js';
import type { RecordCounts } from '../audit/postgres/create-record-queue.js';
import { isPostgresUrl } from '../audit/postgres/postgres-url.js';
import type { Config } from '../config/config-schema.js';
import type { Logger } from '../log.js';
import { createLazyRunner } from '../runner/lazy-runner.js';
import { pruneSessionFolders } from '../runner/session-folder.js';
import type { Runner } from '../runner/runner-types.js';
import type { Sandbox } from '../sandbox/create-sandbox.js';
import type { Catalog } from '../skills/catalog.js';
import { createSkillPins, type SkillPins } from '../gate/skill-pins.js';
import {
  resolveAnchorPaths,
  resolveAuditPath,
  resolveBundlesDir,
  resolveLocalBase,
  resolveRunsDir,
} from './audit-path.js';
import type { CliIo } from './io.js';
import { packageRoot } from '../package-root.js';

export interface Services {
  runner: Runner;
  /** Where the runs' folders are (per-call folders, session folders). */
  runsDir: string;
  /** The folder each skill name first stood for; observe every reloaded catalog. */
  skillPins: SkillPins;
  /**
   * The SQLite audit file; with a PostgreSQL log, the path whose folder holds this server's local state (call
   * folders, environments, bundle copies, console links): the default audit file's, unless `data_dir` is set.
   */
  auditPath: string;
  /** The audit log (SQLite, or PostgreSQL for `--audit postgres://…`), opened (with recovery) on first use. */
  audit: () => Promise<CallLog>;
  /** The sandbox, created on first use. */
  sandbox: () => Promise<Sandbox>;
  /** With a PostgreSQL log: what its queue of read-only records did (shed, failed, …) since start. */
  recordCounts: () => RecordCounts | undefined;
  /** Ends the runner, disposes the sandbox and closes the audit log (only what was opened). */
  close(): Promise<void>;
}

/**
 * The runner with its audit log and sandbox opened on first need: nothing here touches SQLite, probes the sandbox
 * or loads their modules before a call needs them, so start-up answers the first request sooner.
 */
export function createServices(
  config: Config,
  log: Logger,
  io: CliIo,
  catalogs: {
    /** The catalog, every stamp checked (what runs are bound to). */
    catalog: () => Catalog;
    /** The catalog as far as the skills' names and folders go: enough to pin them at start. */
    headline: () => Catalog;
  },
  version: string,
  /**
   * With a PostgreSQL log and the replicas' shared secret: the keys derived from it that seal the views of console
   * approvals waiting here for the consoles of the other replicas (`pendingViewKey`) and sign every decision recorded
   * here (`decisionMacKey`). Without them nothing is shared, and no grant recorded by another process applies.
   */
  sharing?: { viewKey: Uint8Array; decisionKey: Uint8Array },
): Services {
  const target = resolveAuditPath(config, io);
  const auditPath = resolveLocalBase(config, io);
  const runsDir = resolveRunsDir(config, auditPath);
  const envsDir = config.dependencies.dir ?? join(dirname(auditPath), 'envs');
  const bundlesDir = resolveBundlesDir(config, auditPath);
  const consoleDir = join(dirname(auditPath), 'console');
  // Pinned now, before any call loads the runner: the folders served at start are the ones the rules were written for.
  const skillPins = createSkillPins();
  skillPins.observe(catalogs.headline().skills);
  const { catalog } = catalogs;
  const stopPruning = keepRunsPruned(runsDir, config.runs.retention_days, log);
  // The bundles a live session refers to are read from a SQLite log; with PostgreSQL, copies are kept.
  const stopPruningBundles = isPostgresUrl(target)
    ? () => undefined
    : keepBundlesPruned(bundlesDir, auditPath, config, log);
  let audit: Promise<CallLog> | undefined;
  let closeAudit: (() => Promise<void>) | undefined;
  let recordCounts: (() => RecordCounts) | undefined;
  let sandbox: Promise<Sandbox> | undefined;
  // The SQLite log is written by a worker thread: its commits never hold up the answers.
  const openSqlite = () =>
    import('../audit/open-audit-worker.js').then(async ({ openAuditWorker }) => {
      const paths = resolveAnchorPaths(config, auditPath);
      const store = await openAuditWorker({
        path: auditPath,
        log,
        sqliteDriver: config.audit_sqlite_driver,
        anchors: {
          file: paths.file,
          keyFile: paths.keyFile,
          intervalMs: config.audit_anchors.interval_ms,
          log: config.audit_anchors.log,
        },
      });
      closeAudit = () => store.close();
      return store;
    });
  const openPostgres = () =>
    import('../audit/postgres/open-pg-call-log.js').then(({ openPgCallLog }) => {
      const { heartbeat_ms: heartbeatMs, lease_ms: leaseMs } = config.audit_lease;
      const store = openPgCallLog({
        url: target,
        env: io.env,
        log,
        lease: { heartbeatMs, leaseMs },
        maxQueuedRecords: config.audit_records.max_queued,
        ...(sharing === undefined ? {} : { viewKey: sharing.viewKey }),
      });
      closeAudit = () => store.close();
      recordCounts = () => store.recordCounts();
      void store.verifyInBackground();
      // A replica that serves no call yet still renews its lease and closes the sessions of dead peers.
      store.holdLease();
      log.info({ audit: store.target }, 'audit log: PostgreSQL');
      return store;
    });
  const openAudit = () => (audit ??= isPostgresUrl(target) ? openPostgres() : openSqlite());
  if (isPostgresUrl(target)) void openAudit();
  const openSandbox = () =>
    (sandbox ??= import('../sandbox/create-sandbox.js').then(({ createSandbox }) =>
      createSandbox({
        log,
        env: io.env,
        mode: config.sandbox.mode,
        profilesDir: config.sandbox.profiles_dir ?? join(packageRoot(), 'sandbox-profiles'),
      }),
    ));
  // The gate, audit and sandbox code loads with the first call that needs it, not at start-up.
  const runner = createLazyRunner(() =>
    import('../runner/create-runner.js').then(({ createRunner }) =>
      createRunner({
        catalog,
        skillPins,
        config,
        log,
        version,
        audit: openAudit,
        sandbox: openSandbox,
        env: io.env,
        runsDir,
        envsDir,
        // What the server reads or runs: a workspace-writing run never changes these when they lie in the workspace
        // (a planted or rewritten bundle copy would run instead of the approved one).
        serverPaths: [
          auditPath,
          envsDir,
          bundlesDir,
          consoleDir,
          ...Object.values(resolveAnchorPaths(config, auditPath)),
          ...(config.sandbox.profiles_dir === undefined ? [] : [config.sandbox.profiles_dir]),
        ],
        privatePaths: [consoleDir],
        bundlesDir,
        ...(sharing === undefined ? {} : { decisionKey: sharing.decisionKey }),
      }),
    ),
  );
  return {
    runner,
    runsDir,
    skillPins,
    auditPath,
    audit: openAudit,
    sandbox: openSandbox,
    recordCounts: () => recordCounts?.(),
    async close() {
      stopPruning();
      stopPruningBundles();
      await runner.close();
      if (sandbox !== undefined) await (await sandbox).dispose();
      if (audit !== undefined) {
        await audit.catch(() => undefined);
        await closeAudit?.();
      }
    },
  };
}

const DAY_MS = 24 * 60 * 60 * 1000;

/** Runs `prune(cutoffMs)` in the background soon after start, then every 6 hours (off with 0 days). */
function pruneInBackground(days: number, prune: (cutoffMs: number) => Promise<void>): () => void {
  if (days === 0) return () => undefined;
  const run = () => void prune(Date.now() - days * DAY_MS);
  const first = setTimeout(run, 5_000);
  const every = setInterval(run, 6 * 60 * 60 * 1000);
  first.unref();
  every.unref();
  return () => {
    clearTimeout(first);
    clearInterval(every);
  };
}

/** Removes call folders past the retention. */
const keepRunsPruned = (runsDir: string, days: number, log: Logger) =>
  pruneInBackground(days, (cutoffMs) =>
    import('../runner/prune-runs.js')
      .then(async ({ pruneRuns }) => {
        const removed = pruneRuns(runsDir, cutoffMs);
        if (removed.length > 0) log.info({ removed: removed.length, days }, 'removed old call folders');
        // Session folders are removed when their session ends; these are left by a process that was killed.
        const left = await pruneSessionFolders(runsDir, cutoffMs);
        if (left.length > 0) log.info({ removed: left.length, days }, 'removed old session folders');
      })
      .catch((err: unknown) => log.warn({ err }, 'could not remove old call folders')),
  );

/**
 * Removes bundle copies not used for `days`: never one a run holds, nor one a live session's calls refer to (read
 * from the audit log).
 */
const keepBundlesPruned = (bundlesDir: string, auditPath: string, config: Config, log: Logger) =>
  pruneInBackground(config.runs.bundle_retention_days, (cutoffMs) =>
    import('../skills/prune-bundles.js')
      .then(async ({ pruneBundles }) => {
        const { removed } = await pruneBundles(bundlesDir, {
          cutoffMs,
          // The audit log is read only when some copy is old enough.
          referenced: async () =>
            (await import('../audit/referenced-bundles.js')).referencedBundles(
              auditPath,
              config.audit_sqlite_driver,
            ),
        });
        if (removed.length > 0)
          log.info(
            { removed: removed.length, days: config.runs.bundle_retention_days },
            'removed unused bundle copies',
          );
      })
      .catch((err: unknown) => log.warn({ err }, 'could not remove unused bundle copies')),
  );
