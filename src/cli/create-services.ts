import { dirname, join } from 'node:path';
import type { AuditStore } from '../audit/audit-store.js';
import type { Config } from '../config/config-schema.js';
import type { Logger } from '../log.js';
import { createLazyRunner } from '../runner/lazy-runner.js';
import type { Runner } from '../runner/runner-types.js';
import type { Sandbox } from '../sandbox/create-sandbox.js';
import type { Catalog } from '../skills/catalog.js';
import { resolveAuditPath } from './audit-path.js';
import type { CliIo } from './io.js';
import { packageRoot } from '../package-root.js';

export interface Services {
  runner: Runner;
  auditPath: string;
  /** The audit log, opened (with recovery) on first use. */
  audit: () => Promise<AuditStore>;
  /** The sandbox, created on first use. */
  sandbox: () => Promise<Sandbox>;
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
  catalog: () => Catalog,
  version: string,
): Services {
  const auditPath = resolveAuditPath(config, io);
  let audit: Promise<AuditStore> | undefined;
  let sandbox: Promise<Sandbox> | undefined;
  const openAudit = () =>
    (audit ??= import('../audit/open-audit-store.js').then(({ openAuditStore }) => {
      const store = openAuditStore({ path: auditPath, log });
      const r = store.recovery;
      if (r !== null && (r.interruptedCalls.length > 0 || r.closedSessions.length > 0)) {
        log.warn(
          { interrupted: r.interruptedCalls.length, closedSessions: r.closedSessions.length },
          'audit recovery after an unclean stop',
        );
      }
      if (r?.chain?.ok === false)
        log.error({ chain: r.chain }, 'audit chain does not verify: run `skills-mcp audit verify`');
      return store;
    }));
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
        config,
        log,
        version,
        audit: openAudit,
        sandbox: openSandbox,
        env: io.env,
        runsDir: config.data_dir ?? join(dirname(auditPath), 'runs'),
      }),
    ),
  );
  return {
    runner,
    auditPath,
    audit: openAudit,
    sandbox: openSandbox,
    async close() {
      await runner.close();
      if (sandbox !== undefined) await (await sandbox).dispose();
      if (audit !== undefined) (await audit).close();
    },
  };
}
