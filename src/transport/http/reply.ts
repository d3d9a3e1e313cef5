import type { ServerResponse } from 'node:http';

/** Answers with a JSON body unless a response is already under way. */
export function replyJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  if (res.headersSent) {
    res.end();
    return;
  }
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'content-type': 'application/json',
    'content-length': String(Buffer.byteLength(text)),
    'cache-control': 'no-store',
    ...headers,
  });
  res.end(text);
}

/** Answers with a JSON-RPC error object (`id: null`): the shape MCP clients expect from a rejected HTTP request. */
export function replyJsonRpcError(
  res: ServerResponse,
  status: number,
  code: number,
  message: string,
  headers: Record<string, string> = {},
): void {
  replyJson(res, status, { jsonrpc: '2.0', error: { code, message }, id: null }, headers);
}
