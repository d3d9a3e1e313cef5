import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from '../../log.js';
import type { Authenticate, RequestAuth } from './bearer-auth.js';
import type { ConcurrencyLimiter } from './concurrency-limiter.js';
import type { ConnectionBudget } from './connection-budget.js';
import type { LegacySessions } from './legacy-sessions.js';
import type { McpEndpoint, Refusal } from './mcp-endpoint.js';
import type { ProtectedResource } from './protected-resource.js';
import { replyJson, replyJsonRpcError } from './reply.js';
import { createThrottledWarn } from './throttled-warn.js';

/** What an audit log's queue of read-only records did since start; undefined while there is none. */
export type AuditRecordCounts = () =>
  { queued: number; written: number; shed: number; failed: number } | undefined;

export interface HttpHandlerDeps {
  endpoint: McpEndpoint;
  sessions: LegacySessions;
  limiter: ConcurrencyLimiter;
  /** Open `subscriptions/listen` streams per client (token, or peer address without one). */
  listenStreams: ConcurrencyLimiter;
  /** Host/Origin guard; answers 403 itself and returns false. */
  guard: (req: IncomingMessage, res: ServerResponse) => boolean;
  /** The static token or OAuth check; undefined when neither is configured (loopback only). */
  authenticate: Authenticate | undefined;
  /** With OAuth: the Protected Resource Metadata, served without a token. */
  protectedResource?: ProtectedResource;
  /** True once shutdown began: new work gets 503. */
  stopping: () => boolean;
  /** Told when a connection has delivered an admitted request, and whose it is. */
  connections?: Pick<ConnectionBudget, 'trust'>;
  /** Whether `/healthz` shows counts to a caller without a token when no token is configured. */
  healthDetails?: boolean;
  /** Shown with the counts: read-only records waiting, written, shed and failed (a PostgreSQL log). */
  auditRecords?: AuditRecordCounts;
  log: Logger;
}

const MCP_METHODS = 'GET, POST, DELETE';

const shuttingDown = (res: ServerResponse) =>
  replyJsonRpcError(res, 503, -32000, 'Server is shutting down', { connection: 'close', 'retry-after': '5' });

/** An RFC 7591-shaped error for a client registration attempt on a server that uses a static token. */
const NO_REGISTRATION = {
  error: 'invalid_request',
  error_description:
    'this server takes no OAuth sign-in or client registration: send the token it was started with (its ' +
    '--token-file or SKILLS_MCP_TOKEN) as the header "Authorization: Bearer <token>" (mcp-remote: --header ' +
    '"Authorization: Bearer <token>")',
};

const TOO_MANY: Refusal = {
  status: 429,
  message: 'Too many requests in flight for this client: retry shortly',
  headers: { 'retry-after': '1' },
};

const TOO_MANY_STREAMS: Refusal = {
  status: 429,
  message: 'Too many subscriptions/listen streams open for this client: close one first',
  headers: { 'retry-after': '5' },
};

/**
 * The request pipeline. Every path first passes the Host/Origin guard (400 malformed Host, 403). `/healthz`: status
 * for anyone, counts only with the token (or, without a token configured, when `healthDetails` is on). With OAuth,
 * `/.well-known/oauth-protected-resource[/…]`: the metadata, for anyone. `/mcp`: token (401; with OAuth also 403
 * without the read scope, 503 while the issuer cannot be reached) → shutting down (503, except live legacy
 * sessions) → method (405) → body read (bounded by the server's request timeout) → per-client concurrency, or for
 * a `subscriptions/listen` stream the per-client number of open streams (429) → the dual-era endpoint. A request
 * only counts against its client once its body is in, so slow senders hold nobody's slots. Refusals are logged
 * throttled; unexpected errors with a reference id, which is all the client sees.
 */
export function createHttpHandler(
  deps: HttpHandlerDeps,
): (req: IncomingMessage, res: ServerResponse) => void {
  const { endpoint, sessions, limiter, listenStreams, log } = deps;
  // Refusals are the client's doing: a client repeating them gets a log line per window, not one per request.
  const refusal = createThrottledWarn(log);

  const healthz = async (req: IncomingMessage, res: ServerResponse) => {
    if (req.method !== 'GET' && req.method !== 'HEAD')
      return replyJson(res, 405, { error: 'method not allowed' }, { allow: 'GET, HEAD' });
    if (deps.stopping()) return replyJson(res, 503, { status: 'stopping' });
    const details =
      deps.authenticate === undefined
        ? deps.healthDetails === true
        : req.headers.authorization !== undefined && (await deps.authenticate(req.headers.authorization)).ok;
    if (!details) return replyJson(res, 200, { status: 'ok' });
    // Read-only calls answered but not recorded (shed while the database was behind, or lost with it) are said.
    const records = deps.auditRecords?.();
    replyJson(res, 200, {
      status: 'ok',
      sessions: sessions.count(),
      inFlight: limiter.inFlight(),
      ...(records === undefined ? {} : { auditRecords: records }),
    });
  };

  const hasLiveSession = (req: IncomingMessage, principal: string | undefined) => {
    const sid = req.headers['mcp-session-id'];
    return typeof sid === 'string' && sessions.has(sid, principal);
  };

  /** Who is asking: the token's principal, or the peer address without a token. */
  const ownerKey = (req: IncomingMessage, principal: string | undefined) =>
    principal !== undefined ? `principal:${principal}` : `peer:${req.socket.remoteAddress ?? '?'}`;

  const clientKey = (req: IncomingMessage, principal: string | undefined) =>
    hasLiveSession(req, principal)
      ? `session:${String(req.headers['mcp-session-id'])}`
      : ownerKey(req, principal);

  const mcp = async (req: IncomingMessage, res: ServerResponse) => {
    let auth: RequestAuth | undefined;
    if (deps.authenticate !== undefined) {
      const checked = await deps.authenticate(req.headers.authorization);
      if (!checked.ok) {
        const { status, message, headers, reason } = checked.refusal;
        if (reason !== undefined)
          refusal({ peer: req.socket.remoteAddress, reason }, 'request refused: token');
        return replyJsonRpcError(res, status, -32001, message, headers);
      }
      auth = checked.auth;
      // A token holder is not a stranger: its connection is no longer among the first closed at the cap.
      deps.connections?.trust(req.socket, ownerKey(req, auth.principal));
    }
    // While shutting down, only live legacy sessions get through (their calls may wait on the client's answers).
    const principal = auth?.principal;
    const lateArrival = deps.stopping();
    if (lateArrival && !hasLiveSession(req, principal)) return shuttingDown(res);
    if (req.method !== 'GET' && req.method !== 'POST' && req.method !== 'DELETE')
      return replyJsonRpcError(res, 405, -32000, 'Method not allowed', { allow: MCP_METHODS });
    await endpoint.handle(req, res, auth, ({ method, startsWork }) => {
      // While shutting down, answers and notifications (e.g. to an elicitation) still reach running calls.
      if (lateArrival && startsWork)
        return { status: 503, message: 'Server is shutting down', headers: { connection: 'close' } };
      deps.connections?.trust(req.socket, ownerKey(req, principal));
      if (req.method !== 'POST') return undefined;
      // A listen stream stays open for the life of the client: it counts against the client's open streams instead.
      const listen = method === 'subscriptions/listen';
      const key = listen ? ownerKey(req, principal) : clientKey(req, principal);
      const release = (listen ? listenStreams : limiter).tryAcquire(key);
      if (release === undefined) {
        refusal(
          { client: key },
          listen
            ? 'request refused: too many listen streams open'
            : 'request refused: too many requests in flight',
        );
        return listen ? TOO_MANY_STREAMS : TOO_MANY;
      }
      res.once('close', release);
      return undefined;
    });
  };

  const route = async (req: IncomingMessage, res: ServerResponse) => {
    if (!deps.guard(req, res)) {
      refusal(
        { host: String(req.headers.host).slice(0, 200), origin: String(req.headers.origin).slice(0, 200) },
        'request refused: Host or Origin not allowed',
      );
      return;
    }
    // The endpoint's own path needs no parsing (nearly every request); anything else is parsed as a URL.
    const path = req.url === '/mcp' ? '/mcp' : new URL(req.url ?? '/', 'http://localhost').pathname;
    if (path === '/mcp') return mcp(req, res);
    if (path === '/healthz') return healthz(req, res);
    if (deps.protectedResource?.serves(path) === true) return deps.protectedResource.reply(req, res);
    // OAuth clients that find no metadata after a 401 try to register at /register (mcp-remote does, and shows the
    // body): with a static token and no OAuth, the answer says what to send instead.
    if (path === '/register' && deps.authenticate !== undefined && deps.protectedResource === undefined)
      return replyJson(res, 404, NO_REGISTRATION);
    replyJson(res, 404, { error: 'not found: the MCP endpoint is /mcp' });
  };

  return (req, res) => {
    route(req, res).catch((err: unknown) => {
      const ref = randomUUID().slice(0, 8);
      log.error({ err, ref }, 'http request failed');
      if (res.headersSent) res.destroy();
      else replyJsonRpcError(res, 500, -32603, `internal error (ref ${ref})`);
    });
  };
}
