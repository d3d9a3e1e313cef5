import { PROTOCOL_VERSION_META_KEY, type McpServer, type ServerContext } from '@modelcontextprotocol/server';
import { formRevision, type FormRevision } from '../gate/index.js';

/** The protocol revision a request was sent for: the 2026-07-28 envelope's, else the session's `initialize`. */
function protocolVersionOf(server: McpServer, ctx: ServerContext): string | undefined {
  const envelope = ctx.mcpReq.envelope as Record<string, unknown> | undefined;
  const declared = envelope?.[PROTOCOL_VERSION_META_KEY];
  // 2025-era sessions carry no envelope: their revision is the one `initialize` negotiated.
  return typeof declared === 'string' ? declared : server.server.getNegotiatedProtocolVersion();
}

/** Which approval form schema this request's client speaks. */
export function sessionFormRevision(server: McpServer, ctx: ServerContext): FormRevision {
  return formRevision(protocolVersionOf(server, ctx));
}

/**
 * The SDK's legacy shim sends every form as `elicitation/create` with `mode: "form"`, a field 2025-06-18 does not
 * have: on a session of that revision (or earlier) it is taken out on the way to the client, so the request holds
 * only that revision's fields. Everything else passes as it is.
 */
export function fitElicitationToRevision(server: McpServer): void {
  const inner = server.server;
  const request = inner.request.bind(inner);
  inner.request = ((req: { method: string; params?: Record<string, unknown> }, ...rest: unknown[]) => {
    const revision = formRevision(inner.getNegotiatedProtocolVersion());
    if (req.method !== 'elicitation/create' || revision !== '2025-06-18' || req.params?.mode !== 'form')
      return (request as (...a: unknown[]) => unknown)(req, ...rest);
    const { mode: _mode, ...params } = req.params;
    return (request as (...a: unknown[]) => unknown)({ ...req, params }, ...rest);
  }) as typeof inner.request;
}
