import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { OAuthConfig } from '../../config/oauth-schema.js';
import { SkillsError } from '../../errors.js';
import type { Logger } from '../../log.js';
import type { SkillsServer } from '../../mcp/create-server.js';
import type { SessionInfo } from '../../runner/session.js';
import { createStaticTokenAuth, type Authenticate } from './bearer-auth.js';
import { createConcurrencyLimiter } from './concurrency-limiter.js';
import { createConnectionBudget } from './connection-budget.js';
import { createHttpHandler, type AuditRecordCounts } from './create-http-handler.js';
import { DEFAULT_HTTP_LIMITS, type HttpLimits } from './http-limits.js';
import type { SessionEndListener, SessionEndReason } from './http-session.js';
import { isLoopbackHost } from './is-loopback-host.js';
import { createJwtAuth } from './jwt-auth.js';
import { createLegacySessions } from './legacy-sessions.js';
import { createMcpEndpoint } from './mcp-endpoint.js';
import { createMemoryReclaimer } from '../../memory-reclaimer.js';
import { openFileLimit } from './open-file-limit.js';
import { protectedResource } from './protected-resource.js';
import { createRequestGuard, hostnameOf } from './request-guard.js';

export interface HttpServeOptions {
  server: Pick<SkillsServer, 'build' | 'onChanged'>;
  log: Logger;
  /** Bind address. Anything but loopback requires `token` or `oauth`. */
  host: string;
  /** 0 picks a free port (see `HttpServing.url`). */
  port: number;
  /** The bearer token clients must send. Optional on loopback only; never together with `oauth`. */
  token?: string | undefined;
  /** Sign-in with OAuth: JWT access tokens of this issuer, for this resource. */
  oauth?: OAuthConfig | undefined;
  allowedHosts?: readonly string[];
  allowedOrigins?: readonly string[];
  limits?: Partial<HttpLimits>;
  /** Clock for session idle expiry (ms). */
  now?: () => number;
  /** Told when a session ends, e.g. to close it in the audit log (`runner.endSession`). */
  onSessionEnd?: SessionEndListener;
  /** What the audit log's queue of read-only records did (a PostgreSQL log): shown by `/healthz`. */
  auditRecords?: AuditRecordCounts;
}

export interface HttpServing {
  /** The MCP endpoint, e.g. `http://127.0.0.1:3333/mcp`. */
  url: string;
  port: number;
  stats(): { sessions: number; inFlight: number; connections: number; maxConnections: number };
  /** Closes legacy sessions idle past the limit now (it also runs on a timer). */
  expireIdleSessions(): Promise<number>;
  /**
   * Refuses new work (503), lets running requests finish (up to `shutdownGraceMs`, or not at all with `force`),
   * then closes sessions and streams (aborting what still runs), the listener and every connection. Idempotent; a
   * later call with `force` cuts a running grace period short.
   */
  close(opts?: { force?: boolean; reason?: SessionEndReason }): Promise<void>;
}

const urlHost = (host: string) => (host.includes(':') && !host.startsWith('[') ? `[${host}]` : host);

const listen = (server: Server, host: string, port: number) =>
  new Promise<void>((resolve, reject) => {
    const onError = (err: NodeJS.ErrnoException) => {
      reject(
        new SkillsError('CONFIG_INVALID', `cannot listen on ${host}:${port}: ${err.code ?? err.message}`, {
          hint:
            err.code === 'EADDRINUSE'
              ? 'Pick another --port, or --port 0 for a free one.'
              : 'Check --host and --port.',
          cause: err,
        }),
      );
    };
    server.once('error', onError);
    server.listen(port, host, () => {
      server.off('error', onError);
      resolve();
    });
  });

/** Serves the skills over Streamable HTTP on `/mcp` (both protocol eras), with `/healthz` for process managers. */
export async function serveOverHttp(opts: HttpServeOptions): Promise<HttpServing> {
  const { log, host } = opts;
  const token = opts.token === '' ? undefined : opts.token;
  const { oauth } = opts;
  if (token !== undefined && oauth !== undefined) {
    throw new SkillsError('CONFIG_INVALID', 'http.oauth: use either a bearer token or oauth, not both', {
      hint: 'Unset SKILLS_MCP_TOKEN and http.token_file (--token-file) to sign in with OAuth.',
    });
  }
  if (token === undefined && oauth === undefined && !isLoopbackHost(host)) {
    throw new SkillsError(
      'CONFIG_INVALID',
      `a token is required to serve HTTP on ${host}, which is not loopback`,
      {
        hint: 'Set SKILLS_MCP_TOKEN or --token-file (e.g. `openssl rand -hex 32 > token`), configure http.oauth, or bind --host 127.0.0.1.',
      },
    );
  }
  const pr = oauth === undefined ? undefined : protectedResource(oauth);
  const authenticate: Authenticate | undefined =
    pr !== undefined && oauth !== undefined
      ? createJwtAuth(oauth, pr, log)
      : token !== undefined
        ? createStaticTokenAuth(token)
        : undefined;
  // Clients reach an OAuth resource at its configured URL: that name is this server's, whatever the bind address.
  const resourceHost = oauth === undefined ? undefined : hostnameOf(new URL(oauth.resource).host);
  const limits: HttpLimits = { ...DEFAULT_HTTP_LIMITS, ...opts.limits };
  const now = opts.now ?? Date.now;
  const build = (session: SessionInfo, tool?: string) => opts.server.build(session, tool);
  const onEnd: SessionEndListener = opts.onSessionEnd ?? (() => undefined);
  const sessions = createLegacySessions({
    build,
    log,
    idleMs: limits.sessionIdleMs,
    maxSessions: limits.maxSessions,
    maxSessionsPerClient: limits.maxSessionsPerClient,
    now,
    onEnd,
  });
  const endpoint = createMcpEndpoint({
    build,
    sessions,
    log,
    maxBodyBytes: limits.maxBodyBytes,
  });
  const reclaimer = createMemoryReclaimer({ idleMs: limits.reclaimIdleMs, log });
  const limiter = createConcurrencyLimiter(limits.maxInFlightPerClient, reclaimer);
  const listenStreams = createConcurrencyLimiter(limits.maxListenStreamsPerClient);
  let stopping = false;
  const server = createServer({
    maxHeaderSize: limits.maxHeaderBytes,
    requestTimeout: limits.requestTimeoutMs,
    headersTimeout: Math.min(limits.requestTimeoutMs, limits.headersTimeoutMs),
    // Node reaps requests past those deadlines on this tick (30 s by default, far too slow under a flood).
    connectionsCheckingInterval: 1000,
  });
  const fdLimit = openFileLimit();
  const maxConnections = Math.max(
    1,
    Math.min(limits.maxConnections, fdLimit === undefined ? Infinity : Math.floor(fdLimit / 2)),
  );
  const budget = createConnectionBudget(server, maxConnections, log);
  const handler = createHttpHandler({
    endpoint,
    sessions,
    limiter,
    listenStreams,
    guard: createRequestGuard({
      host,
      allowedHosts: [...(opts.allowedHosts ?? []), ...(resourceHost === undefined ? [] : [resourceHost])],
      allowedOrigins: opts.allowedOrigins ?? [],
    }),
    authenticate,
    ...(pr === undefined ? {} : { protectedResource: pr }),
    stopping: () => stopping,
    connections: budget,
    healthDetails: limits.healthDetails,
    ...(opts.auditRecords === undefined ? {} : { auditRecords: opts.auditRecords }),
    log,
  });
  server.on('request', handler);
  await listen(server, host, opts.port);
  // Once listening, an error (e.g. EMFILE on accept) is logged, never thrown: the server keeps serving.
  server.on('error', (err) => log.error({ err }, 'http server error'));
  const port = (server.address() as AddressInfo).port;

  const unsubscribe = opts.server.onChanged(() => {
    endpoint.notify.toolsChanged();
    endpoint.notify.promptsChanged();
    endpoint.notify.resourcesChanged();
  });
  const sweep = setInterval(
    () => void sessions.expireIdle().catch((err: unknown) => log.warn({ err }, 'session expiry failed')),
    Math.max(1000, Math.min(limits.sessionIdleMs / 4, 60_000)),
  );
  sweep.unref();

  let closing: Promise<void> | undefined;
  let forceNow!: () => void;
  const forced = new Promise<void>((r) => (forceNow = r));
  // Shutdown keeps listening through the grace period, so a running call can still get its client's answer (an
  // elicitation reply may come on a new connection); new work gets 503 and /healthz says "stopping" meanwhile.
  const shutdown = async (reason: SessionEndReason) => {
    stopping = true;
    unsubscribe();
    clearInterval(sweep);
    reclaimer.stop();
    if (limiter.inFlight() > 0) {
      log.info({ inFlight: limiter.inFlight() }, 'waiting for running requests');
      let timer: NodeJS.Timeout | undefined;
      const grace = new Promise<void>((r) => (timer = setTimeout(r, limits.shutdownGraceMs)));
      await Promise.race([limiter.drained(), grace, forced]);
      clearTimeout(timer);
    }
    if (limiter.inFlight() > 0) log.warn({ inFlight: limiter.inFlight() }, 'interrupting running requests');
    const stopped = new Promise<void>((resolve) => server.close(() => resolve()));
    await Promise.all([sessions.closeAll(reason), endpoint.close()]);
    for (const session of endpoint.modernSessions()) {
      try {
        await onEnd(session, reason);
      } catch (err) {
        log.error({ err, session: session.id }, 'could not record the end of an http session');
      }
    }
    server.closeAllConnections();
    await stopped;
  };

  return {
    url: `http://${urlHost(host)}:${port}/mcp`,
    port,
    stats: () => ({
      sessions: sessions.count(),
      inFlight: limiter.inFlight(),
      connections: budget.open(),
      maxConnections,
    }),
    expireIdleSessions: () => sessions.expireIdle(),
    close(closeOpts = {}) {
      if (closeOpts.force === true) forceNow();
      closing ??= shutdown(closeOpts.reason ?? 'shutdown');
      return closing;
    },
  };
}
