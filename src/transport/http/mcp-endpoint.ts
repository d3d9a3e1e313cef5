import type { IncomingMessage, ServerResponse } from 'node:http';
import {
  createMcpHandler,
  isLegacyRequest,
  type AuthInfo,
  type McpServer,
  type ServerNotifier,
} from '@modelcontextprotocol/server';
import type { Logger } from '../../log.js';
import { callerOf } from '../../mcp/auth-info.js';
import type { SessionInfo } from '../../runner/session.js';
import type { RequestAuth } from './bearer-auth.js';
import { httpSession } from './http-session.js';
import type { LegacySessions } from './legacy-sessions.js';
import { readRequestBody } from './read-request-body.js';
import { replyJson, replyJsonRpcError } from './reply.js';
import { createThrottledWarn } from './throttled-warn.js';
import { webRequestOf } from './web-request-of.js';
import { writeWebResponse } from './write-web-response.js';

/** A body read that failed because the connection closed (reset, or ended before the declared length). */
const clientLeft = (err: unknown): boolean => {
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  return code === 'ECONNRESET' || code === 'ERR_STREAM_PREMATURE_CLOSE';
};

export interface McpEndpointOptions {
  /** An instance for a session; `tool`: the request calls that tool and nothing else (see `SkillsServer.build`). */
  build: (session: SessionInfo, tool?: string) => McpServer;
  sessions: LegacySessions;
  log: Logger;
  maxBodyBytes: number;
}

/** What the endpoint learned from a request before serving it. */
export interface McpRequestFacts {
  /** The JSON-RPC method of a single-message POST (used to spare `subscriptions/listen` streams from limits). */
  method: string | undefined;
  /** Whether the POST carries a JSON-RPC request (new work), not only responses or notifications. */
  startsWork: boolean;
}

/** Why a request is not served: the HTTP answer to give instead. */
export interface Refusal {
  status: number;
  message: string;
  headers?: Record<string, string>;
}

export interface McpEndpoint {
  /**
   * Serves one request on `/mcp` (already past the Host/Origin guard and the token check). `admit` is called once
   * the body is read, before the request is dispatched; a refusal is answered as a JSON-RPC error. `auth` reaches
   * handlers as `ctx.http.authInfo` in both eras.
   */
  handle(
    req: IncomingMessage,
    res: ServerResponse,
    auth: RequestAuth | undefined,
    admit?: (facts: McpRequestFacts) => Refusal | undefined,
  ): Promise<void>;
  /** Publishes list changes to modern clients' `subscriptions/listen` streams. */
  notify: ServerNotifier;
  /** Ends listen streams and aborts modern exchanges still running. */
  close(): Promise<void>;
  /** The sessions modern requests were served under (one per principal, or http-anonymous). */
  modernSessions(): SessionInfo[];
}

const parseJson = (text: string): unknown => {
  try {
    return text === '' ? undefined : (JSON.parse(text) as unknown);
  } catch {
    return undefined;
  }
};

/** The JSON-RPC id an adapter-made error echoes (as the SDK's Node adapter does): a single request's, else null. */
const echoableId = (body: unknown): string | number | null => {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return null;
  const { method, id } = body as { method?: unknown; id?: unknown };
  if (typeof method !== 'string') return null;
  return typeof id === 'string' || typeof id === 'number' ? id : null;
};

const isRequest = (m: unknown) => typeof m === 'object' && m !== null && 'method' in m && 'id' in m;

/** The tool a single `tools/call` request names, else undefined. */
const toolCalled = (body: unknown): string | undefined => {
  if (methodOf(body) !== 'tools/call') return undefined;
  const params = (body as { params?: unknown }).params;
  const name =
    typeof params === 'object' && params !== null ? (params as { name?: unknown }).name : undefined;
  return typeof name === 'string' ? name : undefined;
};

const methodOf = (body: unknown): string | undefined =>
  typeof body === 'object' &&
  body !== null &&
  !Array.isArray(body) &&
  'method' in body &&
  typeof body.method === 'string'
    ? body.method
    : undefined;

/**
 * The dual-era `/mcp` endpoint. Routing follows the SDK's own classifier (`isLegacyRequest`), never the method
 * name: 2025-era traffic goes to sessions (so the server can send elicitation requests), everything carrying the
 * 2026-07-28 envelope to the strict stateless handler, which builds one server instance per request.
 */
export function createMcpEndpoint(opts: McpEndpointOptions): McpEndpoint {
  const { log, sessions, maxBodyBytes } = opts;
  const warnRefused = createThrottledWarn(log);
  const onerror = (err: Error) => log.debug({ err }, 'mcp request rejected');
  const seen = new Map<string, SessionInfo>();
  const session = (auth: AuthInfo | undefined) => {
    const info = httpSession(auth?.clientId, undefined, callerOf(auth));
    seen.set(info.id, info);
    return info;
  };
  // The tool each stateless request calls, from the very body the SDK serves it from: its instance registers only
  // that tool (a stateless instance answers one request).
  const calling = new WeakMap<Request, string>();
  const modern = createMcpHandler(
    (ctx) => opts.build(session(ctx.authInfo), ctx.requestInfo && calling.get(ctx.requestInfo)),
    { legacy: 'reject', maxRequestBodySize: maxBodyBytes, onerror },
  );

  /** Serves a modern request as the SDK's `toNodeHandler` would, from the request already read and parsed. */
  const serveModern = async (
    request: Request,
    res: ServerResponse,
    body: unknown,
    auth: RequestAuth | undefined,
    settled: () => void,
  ) => {
    const tool = toolCalled(body);
    if (tool !== undefined) calling.set(request, tool);
    let response: Response;
    try {
      response = await modern.fetch(request, {
        ...(auth === undefined ? {} : { authInfo: auth.info }),
        ...(body === undefined ? {} : { parsedBody: body }),
      });
    } catch (err) {
      onerror(err instanceof Error ? err : new Error(String(err)));
      settled();
      return replyJson(res, 500, {
        jsonrpc: '2.0',
        error: { code: -32603, message: 'Internal server error' },
        id: echoableId(body),
      });
    }
    await writeWebResponse(res, response, request.signal);
    settled();
  };

  return {
    notify: modern.notify,
    close: () => modern.close(),
    modernSessions: () => [...seen.values()],
    async handle(req, res, auth, admit) {
      let text;
      try {
        text = await readRequestBody(req, maxBodyBytes);
      } catch (err) {
        // The client went away before its body was in: nobody is left to answer.
        if (!clientLeft(err)) throw err;
        return void log.debug({ err }, 'client left before its request body was in');
      }
      if (text === undefined) {
        warnRefused({ limit: maxBodyBytes }, 'request body too large');
        return replyJsonRpcError(
          res,
          413,
          -32000,
          `Payload Too Large: the body must not exceed ${maxBodyBytes} bytes`,
          {
            connection: 'close',
          },
        );
      }
      const isPost = req.method === 'POST';
      const body = isPost ? parseJson(text) : undefined;
      const startsWork = Array.isArray(body) ? body.some(isRequest) : isRequest(body);
      const refusal = admit?.({ method: methodOf(body), startsWork });
      if (refusal !== undefined)
        return replyJsonRpcError(res, refusal.status, -32000, refusal.message, refusal.headers);
      // The SDK classifies an empty or non-JSON POST as legacy; with the body parsed once, it reads nothing again.
      if (isPost && body === undefined)
        return replyJsonRpcError(res, 400, -32700, 'Parse error: the body is not JSON');
      const abort = new AbortController();
      const request = webRequestOf(req, abort.signal);
      if (await isLegacyRequest(request, body, { maxRequestBodySize: maxBodyBytes }))
        return sessions.handle(req, res, body, auth);
      // Aborted when the client goes away before the answer is written (as the SDK's Node adapter does).
      let finished = false;
      res.once('close', () => {
        if (!finished) abort.abort();
      });
      if (res.destroyed) abort.abort();
      // The principal travels as the client id; the token itself is not handed on to handlers.
      return serveModern(request, res, body, auth, () => (finished = true));
    },
  };
}
