import { PROTOCOL_VERSION_META_KEY, type McpServer, type ServerContext } from '@modelcontextprotocol/server';
import { formRevision, type FormRevision } from '../approvals/approval-request.js';

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
