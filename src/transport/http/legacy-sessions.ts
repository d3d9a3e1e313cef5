import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import {
  isInitializeRequest,
  WebStandardStreamableHTTPServerTransport,
  type McpServer,
} from '@modelcontextprotocol/server';
import type { Logger } from '../../log.js';
import { callerOf } from '../../mcp/auth-info.js';
import type { SessionInfo } from '../../runner/session.js';
import type { RequestAuth } from './bearer-auth.js';
import { httpSession, type SessionEndListener, type SessionEndReason } from './http-session.js';
import { replyJsonRpcError } from './reply.js';
import { webRequestOf } from './web-request-of.js';
import { writeWebResponse } from './write-web-response.js';

export interface LegacySessionsOptions {
  build: (session: SessionInfo) => McpServer;
  log: Logger;
  /** A session with nothing open for this long is closed; its id then gets 404. */
  idleMs: number;
  maxSessions: number;
  /**
   * Sessions one client (token and peer address) may hold. At the cap its least recently used session with nothing
   * in flight and no listen stream open is closed for the new one, so a client cannot take every session of the server.
   */
  maxSessionsPerClient: number;
  now: () => number;
  onEnd: SessionEndListener;
}

/** 2025-era clients: one MCP server instance per `Mcp-Session-Id`, so the server can ask them (elicitation). */
export interface LegacySessions {
  /** Serves one legacy request; `body` is the parsed JSON of a POST. A session belongs to the principal that opened it. */
  handle(
    req: IncomingMessage,
    res: ServerResponse,
    body: unknown,
    auth: RequestAuth | undefined,
  ): Promise<void>;
  /** Whether `id` names a live session of `principal`. */
  has(id: string, principal: string | undefined): boolean;
  count(): number;
  /** Closes sessions idle past `idleMs` (nothing in flight; an idle GET stream does not count); returns how many. */
  expireIdle(): Promise<number>;
  /** Closes every session: open streams end, running handlers are aborted. */
  closeAll(reason: SessionEndReason): Promise<void>;
}

interface Session {
  info: SessionInfo;
  principal: string | undefined;
  transport: WebStandardStreamableHTTPServerTransport;
  server: McpServer;
  /** Who opened it: the principal (or none) and the peer address. */
  client: string;
  /** Requests in flight, not counting GET streams (an idle stream does not keep a session alive). */
  open: number;
  /** Open GET streams: a client is connected to it, so no other client's new session may close it. */
  streams: number;
  lastSeen: number;
}

const isInitialize = (body: unknown) =>
  Array.isArray(body) ? body.some((m) => isInitializeRequest(m)) : isInitializeRequest(body);

export function createLegacySessions(opts: LegacySessionsOptions): LegacySessions {
  const { log, now } = opts;
  const sessions = new Map<string, Session>();

  const ended = async (s: Session, reason: SessionEndReason, why: string) => {
    log.info({ session: s.info.id, reason: why }, 'http session closed');
    try {
      await opts.onEnd(s.info, reason);
    } catch (err) {
      log.error({ err, session: s.info.id }, 'could not record the end of an http session');
    }
  };

  const close = async (s: Session, reason: SessionEndReason, why: string) => {
    if (!sessions.delete(s.info.id)) return;
    await s.server.close().catch((err: unknown) => log.warn({ err }, 'error while closing an http session'));
    await ended(s, reason, why);
  };

  /**
   * Serves one request of the session through the SDK's web-standard session transport, as its Node wrapper would:
   * a client that goes away aborts the request and cancels the answer's stream; an event stream's head goes out
   * after one turn without an event (at once for a GET stream, which may wait long for its first). A POST answered
   * within that turn, with nothing else sent on its stream (a read-only tool, a list), gets its answer as JSON.
   */
  const serve = async (
    s: Session,
    req: IncomingMessage,
    res: ServerResponse,
    body: unknown,
    auth: RequestAuth | undefined,
  ) => {
    s.lastSeen = now();
    if (req.method !== 'GET') {
      s.open++;
      res.once('close', () => {
        s.open--;
        s.lastSeen = now();
      });
    } else {
      s.streams++;
      res.once('close', () => s.streams--);
    }
    const abort = new AbortController();
    let finished = false;
    res.once('close', () => {
      if (!finished) abort.abort();
    });
    if (res.destroyed) abort.abort();
    const response = await s.transport.handleRequest(webRequestOf(req, abort.signal), {
      ...(auth === undefined ? {} : { authInfo: auth.info }),
      ...(body === undefined ? {} : { parsedBody: body }),
    });
    await writeWebResponse(res, response, abort.signal, req.method === 'GET' ? 'now' : 'next-turn');
    finished = true;
  };

  /**
   * Makes room for one more session of `client`: false when all of its sessions are busy. Processes on one peer
   * without a token share a client key, so a session with a request in flight or a listen stream open (a client is
   * connected to it) is never closed here: only sessions nobody is connected to make room.
   */
  const roomFor = async (client: string) => {
    const mine = [...sessions.values()].filter((s) => s.client === client);
    if (mine.length < opts.maxSessionsPerClient) return true;
    const idle = mine
      .filter((s) => s.open === 0 && s.streams === 0)
      .sort((a, b) => a.lastSeen - b.lastSeen)[0];
    if (idle === undefined) return false;
    await close(idle, 'client_closed', 'replaced by a newer session of the same client');
    return true;
  };

  const open = async (
    req: IncomingMessage,
    res: ServerResponse,
    body: unknown,
    auth: RequestAuth | undefined,
  ) => {
    const principal = auth?.principal;
    const client = `${principal ?? '-'}|${req.socket.remoteAddress ?? '?'}`;
    if (!(await roomFor(client)) || sessions.size >= opts.maxSessions) {
      log.warn({ max: opts.maxSessions, perClient: opts.maxSessionsPerClient }, 'http session limit reached');
      replyJsonRpcError(res, 503, -32000, 'Too many sessions: try again later', { 'retry-after': '30' });
      return;
    }
    const id = randomUUID();
    const info = httpSession(principal, id, callerOf(auth?.info));
    const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: () => id });
    const server = opts.build(info);
    const s: Session = { info, principal, client, transport, server, open: 0, streams: 0, lastSeen: now() };
    transport.onclose = () => {
      // DELETE from the client (our own closes remove the session first).
      if (sessions.delete(id)) void ended(s, 'client_closed', 'deleted by the client');
    };
    await server.connect(transport);
    sessions.set(id, s);
    await serve(s, req, res, body, auth);
    if (transport.sessionId === undefined) {
      // The initialize was refused (bad version, malformed): no session came into being.
      sessions.delete(id);
      await server.close().catch(() => undefined);
    } else {
      log.info({ session: id, principal }, 'http session opened');
    }
  };

  return {
    async handle(req, res, body, auth) {
      const principal = auth?.principal;
      const id = req.headers['mcp-session-id'];
      if (typeof id !== 'string' || id === '') {
        if (req.method === 'POST' && isInitialize(body)) return open(req, res, body, auth);
        // A GET stream belongs to a session: without one there is no stream to offer, which the spec says with 405
        // (clients that probe before initialize, as the AI SDK's does, take 405 quietly and log an error on 400).
        if (req.method === 'GET')
          return replyJsonRpcError(
            res,
            405,
            -32000,
            'Method not allowed: a GET stream needs the Mcp-Session-Id of a session opened by an initialize POST',
            { allow: 'POST' },
          );
        return replyJsonRpcError(res, 400, -32000, 'Bad Request: Mcp-Session-Id header is required');
      }
      const s = sessions.get(id);
      // A session is only visible to the principal that opened it: another token gets the same 404 as a stranger.
      if (s === undefined || s.principal !== principal)
        return replyJsonRpcError(res, 404, -32001, 'Session not found');
      await serve(s, req, res, body, auth);
    },
    has(id, principal) {
      const s = sessions.get(id);
      return s !== undefined && s.principal === principal;
    },
    count: () => sessions.size,
    async expireIdle() {
      const cutoff = now() - opts.idleMs;
      const idle = [...sessions.values()].filter((s) => s.open === 0 && s.lastSeen <= cutoff);
      await Promise.all(idle.map((s) => close(s, 'client_closed', 'idle')));
      return idle.length;
    },
    async closeAll(reason) {
      await Promise.all([...sessions.values()].map((s) => close(s, reason, 'server stopping')));
    },
  };
}
