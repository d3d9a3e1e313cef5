import { randomUUID } from 'node:crypto';
import { dirname } from 'node:path';
import { parseArgs } from 'node:util';
import type { ConfigInput } from '../config/config-schema.js';
import { isSkillsError } from '../errors.js';
import { createLogger } from '../log.js';
import { createSkillsServer } from '../mcp/create-server.js';
import { startConsoleIfEnabled } from './approval-console.js';
import { createServices } from './create-services.js';
import { isPostgresUrl } from '../audit/postgres/postgres-url.js';
import { pgConnectionConfig } from '../audit/postgres/pg-connection-config.js';
import { pendingViewKey } from '../audit/postgres/pending-view-key.js';
import { decisionMacKey } from '../audit/decision-mac-key.js';
import { readStateKey } from './read-state-key.js';
import type { SessionInfo } from '../runner/session.js';
import { listedOf, loadCatalog, loadsOf, type Catalog } from '../skills/catalog.js';
import { openCatalogCache } from '../skills/open-catalog-cache.js';
import type { CatalogDiff } from '../skills/diff-catalogs.js';
import { deferCheck, type DeferredCheck } from '../skills/defer-check.js';
import type { FolderLoad } from '../skills/folder-load.js';
import { reloadCatalog } from '../skills/reload-catalog.js';
import { servedRoots } from '../skills/served-roots.js';
import { watchCatalog, type CatalogWatcher } from '../skills/watch-catalog.js';
import { serveOverStdio } from '../transport/stdio.js';
import { HELP } from './help.js';
import type { ServeContext } from './serve-context.js';
import type { CliIo, ExitCode } from './io.js';
import { defined, resolveConfig, sourcesDir, withSources } from './resolve-config.js';
import { resolveLocalBase } from './audit-path.js';
import { packageBuild, packageVersion } from '../package-root.js';
import { listenForStopSignals, type StopSignals } from './stop-signals.js';
import { CLIENTS } from './client-snippet.js';
import { SERVE_OPTIONS } from './command-options.js';
import { parseOptions } from './option-table.js';

const SERVE_PARSE = parseOptions(SERVE_OPTIONS);

export async function runServe(args: string[], io: CliIo, stdin: NodeJS.ReadableStream): Promise<ExitCode> {
  const { values } = parseArgs({ args, options: SERVE_PARSE, allowPositionals: false, strict: true });
  if (values.help) {
    io.err(`${HELP.serve}\n`);
    return 0;
  }
  const signals = listenForStopSignals();
  try {
    return await serve(values, io, stdin, signals);
  } finally {
    signals.dispose();
  }
}

async function serve(
  values: ReturnType<typeof parseArgs<{ options: typeof SERVE_PARSE }>>['values'],
  io: CliIo,
  stdin: NodeJS.ReadableStream,
  signals: StopSignals,
): Promise<ExitCode> {
  const flags = defined({
    skills: values.skills,
    tools: values.tools,
    workspace: values.workspace,
    audit: values.audit,
    log_level: values['log-level'],
    elicitation: values['no-elicitation'] ? false : undefined,
    watch: values['no-watch'] ? false : undefined,
    max_message_bytes:
      values['max-message-bytes'] === undefined ? undefined : Number(values['max-message-bytes']),
  }) as Partial<ConfigInput>;
  // Layered key by key onto the file's `http.oauth`: a flag may set the resource of an issuer the file names.
  const oauth = defined({ issuer: values['oauth-issuer'], resource: values['oauth-resource'] });
  const http = defined({
    enabled: values.http,
    host: values.host,
    port: values.port === undefined ? undefined : Number(values.port),
    token_file: values['token-file'],
    state_key_file: values['state-key-file'],
    oauth: Object.keys(oauth).length === 0 ? undefined : oauth,
  });
  if (Object.keys(http).length > 0) flags.http = http as ConfigInput['http'];
  if (values['approval-console']) flags.approval = { console: true };
  const loaded = resolveConfig(io, flags, values.config);
  if (loaded === undefined) return 2;
  if (!withSources(io, loaded)) return 2;
  const { config } = loaded;
  if (config.audit !== undefined && isPostgresUrl(config.audit)) {
    try {
      pgConnectionConfig(config.audit);
    } catch (e) {
      if (!isSkillsError(e)) throw e;
      io.err(`skills-mcp: invalid configuration\n  ${e.message}\n  ${e.hint ?? ''}\n`);
      return 2;
    }
    // A PostgreSQL log is shared by replicas: an approval's retry may reach any of them, which must all verify it.
    if (config.http.enabled && config.http.state_key_file === undefined) {
      io.err(
        'skills-mcp: invalid configuration\n  http.state_key_file: required when serving over HTTP with a ' +
          'PostgreSQL audit log (replicas share it; each must verify the approval round trips of the others)\n  ' +
          'Make one with `openssl rand -hex 32 > state.key && chmod 600 state.key` and give every replica ' +
          '--state-key-file state.key.\n',
      );
      return 2;
    }
  }
  if (config.skills.length === 0) {
    io.err(
      'skills-mcp: no skills folder given.\n  Pass --skills DIR (repeatable), set SKILLS_MCP_SKILLS, or list `skills:` in skills-mcp.yaml.\n',
    );
    return 2;
  }
  let stateSecret: Buffer | undefined;
  try {
    if (config.http.state_key_file !== undefined)
      stateSecret = readStateKey(config.http.state_key_file, io.cwd);
  } catch (e) {
    if (!isSkillsError(e) || e.code !== 'CONFIG_INVALID') throw e;
    io.err(`skills-mcp: invalid configuration\n  http.state_key_file: ${e.message}\n  ${e.hint ?? ''}\n`);
    return 2;
  }
  // Over stdio the host shows stderr to its user: silence unless something is wrong, or unless asked.
  const log = createLogger(config.log_level ?? (config.http.enabled ? 'info' : 'warn'));
  // What each skill folder gave at the last start: only folders that changed since are read again.
  const cache = openCatalogCache({
    stateDir: dirname(resolveLocalBase(config, io)),
    roots: config.skills,
    build: packageBuild(),
    log,
  });
  const cached = cache.take();
  // A folder taken from the cache is checked at first as far as its skill file: what the first answers give of it
  // (its name and description, the number of skills). The rest of its stamps are checked once the transport serves,
  // in batches, or at once when something asks for more of the catalog first.
  const unchecked: FolderLoad[] = [];
  let catalog: Catalog = loadCatalog(config.skills, {
    reuse: cached.loads,
    ...(cached.listed === undefined ? {} : { listed: cached.listed }),
    unchecked,
  });
  let deferred: DeferredCheck | undefined = unchecked.length === 0 ? undefined : deferCheck(unchecked);
  const missing = catalog.findings.filter((f) => f.rule === 'root-missing');
  if (missing.length > 0) {
    io.err(
      `skills-mcp: invalid configuration\n${missing.map((f) => `  skills: ${f.path}: ${f.message}`).join('\n')}\n`,
    );
    return 2;
  }
  for (const f of catalog.findings) log.warn({ path: f.path, line: f.line, rule: f.rule }, f.message);
  log.info(
    {
      count: catalog.skills.length,
      // Folders taken from the catalog cache unread (they looked as they did when it was saved).
      cached: catalog.folders.filter((f) => cached.loads.get(f.dir) === f).length,
      roots: config.skills,
      config: loaded.file,
    },
    'skills loaded',
  );
  // Not an error: the skill may be added later (overrides apply to whatever skill of that name is loaded then).
  for (const skill of Object.keys(config.skill_overrides))
    if (catalog.get(skill) === undefined)
      log.warn({ skill }, 'skill_overrides names a skill that is not loaded');
  cache.save(catalog);

  const version = packageVersion();
  // With a PostgreSQL log, the consoles of the replicas show each other their waiting approvals, sealed with a key
  // derived from the same shared secret, and sign the decisions they record with another.
  const sharing =
    stateSecret !== undefined && config.audit !== undefined && isPostgresUrl(config.audit)
      ? { viewKey: pendingViewKey(stateSecret), decisionKey: decisionMacKey(stateSecret) }
      : undefined;
  // A reload checks every stamp of every folder it reuses, and every git source's checkout against its pin.
  const reload = (fresh?: ReadonlySet<string>) => {
    const listed = listedOf(catalog);
    return loadCatalog(servedRoots(config, sourcesDir(config, io), io.env, log), {
      reuse: loadsOf(catalog),
      ...(listed === undefined ? {} : { listed }),
      ...(fresh === undefined ? {} : { fresh }),
    });
  };
  let watcher: CatalogWatcher | undefined;
  const adopt = (next: Catalog) => {
    catalog = next;
    deferred?.close();
    deferred = undefined;
    cache.save(next);
    watcher?.sync();
  };
  const reloading = {
    load: () => reload(),
    current: () => catalog,
    onChange: (next: Catalog, diff: CatalogDiff) => {
      services.skillPins.observe(next.skills);
      adopt(next);
      server.catalogChanged(diff);
    },
    // The same skills, some folder read again: its new stamps (and any new folder in it) are kept and watched.
    onReread: adopt,
    log,
  };
  /** The end of the deferred check: folders whose load no longer holds are read again, and clients told. */
  function settle(changed: ReadonlySet<string>) {
    deferred = undefined;
    if (changed.size > 0) reloadCatalog({ ...reloading, load: () => reload(changed) });
  }
  /** The catalog, every stamp of it checked. */
  const current = (): Catalog => {
    if (deferred !== undefined) settle(deferred.finish());
    return catalog;
  };
  const services = createServices(
    config,
    log,
    io,
    { catalog: current, headline: () => catalog },
    version,
    sharing,
  );
  const approvalConsole = await startConsoleIfEnabled(config, log, io, services);
  // The Skills extension's code loads only when it is on.
  const skillsExtension = config.skills_extension
    ? (await import('../mcp/skills-extension/skills-extension.js')).createSkillsExtensionState(log)
    : undefined;
  const server = createSkillsServer({
    catalog: current,
    headline: () => catalog,
    reloadSkills: (stale) => void reloadCatalog({ ...reloading, load: () => reload(new Set([stale.dir])) }),
    config,
    log,
    version,
    runner: services.runner,
    runsDir: services.runsDir,
    ...(approvalConsole === undefined ? {} : { console: approvalConsole.console }),
    ...(skillsExtension === undefined ? {} : { skillsExtension }),
    ...(stateSecret === undefined ? {} : { stateSecret }),
  });
  if (stateSecret !== undefined) {
    // The server keeps only the key derived from it.
    stateSecret.fill(0);
    log.info({ file: config.http.state_key_file }, 'approval round trips signed with the shared state key');
  }
  // The first run's one-time work (audit log, sandbox probe, interpreters) once the server is up, off the first
  // request's path, so problems show in the log early; a session's initialize starts it sooner (create-server).
  const prepareTimer = setTimeout(() => void services.runner.prepareRuns().catch(() => undefined), 1000);
  prepareTimer.unref();
  if (config.watch) {
    watcher = watchCatalog({
      roots: config.skills,
      ...reloading,
      // The watches' first pass checks every folder in full once it is watched: what the start left unchecked too.
      passed: (checked, all) => {
        if (deferred === undefined || checked !== catalog) return;
        if (all) {
          deferred.close();
          deferred = undefined;
        } else deferred.start(settle);
      },
    });
  }
  const ctx: ServeContext = {
    config,
    log,
    io,
    server,
    catalog: () => catalog,
    version,
    runner: services.runner,
    recordCounts: services.recordCounts,
    signals,
    // The rest of the start's check, and hot reload's watches, once the transport serves: off the first answers' path.
    serving: () => {
      if (watcher === undefined) deferred?.start(settle);
      else watcher.start();
    },
  };
  try {
    // The HTTP stack (and the web globals it pulls in) loads only when serving HTTP.
    if (config.http.enabled) return await (await import('./serve-http.js')).runHttp(ctx);
    return await runStdio(ctx, stdin);
  } finally {
    clearTimeout(prepareTimer);
    watcher?.close();
    deferred?.close();
    cache.flush();
    await approvalConsole?.close();
    await services.close();
  }
}

async function runStdio(ctx: ServeContext, stdin: NodeJS.ReadableStream): Promise<ExitCode> {
  const { server, log, io, config } = ctx;
  const session: SessionInfo = { id: randomUUID(), transport: 'stdio' };
  const serving = serveOverStdio(() => server.build(session), {
    stdin,
    stdout: process.stdout,
    maxMessageBytes: config.max_message_bytes,
    log,
  });
  ctx.serving();
  if (io.stdinIsTTY) {
    io.err(
      `skills-mcp ${ctx.version} is serving ${ctx.catalog().skills.length} skills over stdio.\n` +
        'It is an MCP server: a client starts it and talks to it on stdin/stdout. To connect one, print a\n' +
        `config snippet with \`skills-mcp config claude-desktop\` (or ${CLIENTS.slice(1).join(', ')}).\n` +
        'Press Ctrl+C to stop.\n',
    );
  }
  let signalled = false;
  ctx.signals.onSignal((signal, count) => {
    if (count > 1) {
      // A second signal while stopping ends the process at once, as the signal's default action does.
      ctx.signals.dispose();
      process.kill(process.pid, signal);
      return;
    }
    log.info({ signal }, 'stopping');
    signalled = true;
    void serving.close();
  });
  log.info({ transport: 'stdio' }, 'ready');
  const end = await serving.closed;
  const failure = end.reason === 'transport_failed' && !signalled ? end.error : undefined;
  await ctx.runner
    .endSession(session, signalled ? 'signal' : failure !== undefined ? 'error' : 'client_closed')
    .catch((err: unknown) => log.error({ err }, 'could not end the audit session'));
  if (failure !== undefined) {
    // A host that loses its server should learn why: a failed transport is an error exit, never a clean one.
    log.error({ err: failure }, 'stdio transport failed');
    io.err(`skills-mcp: stopped: the stdio transport failed: ${failure.message}\n`);
    return 1;
  }
  log.info('stopped');
  return 0;
}
