import { request } from 'node:http';

export interface RawResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

export interface RawOptions {
  method?: string;
  headers?: Record<string, string>;
  body?: string | Buffer;
}

/** One plain HTTP/1.1 request with full control of the headers (Host included), read to the end. */
export function rawRequest(url: string, opts: RawOptions = {}): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      { method: opts.method ?? 'GET', headers: opts.headers ?? {}, agent: false },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            headers: res.headers,
            body: Buffer.concat(chunks).toString('utf8'),
          }),
        );
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(opts.body);
  });
}

export const MCP_HEADERS = {
  'content-type': 'application/json',
  accept: 'application/json, text/event-stream',
};

/** A 2025-era `initialize` request body. */
export const INITIALIZE = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
});

/** Opens a legacy session with a raw initialize (and the initialized notification); returns its id. */
export async function openRawSession(url: string, headers: Record<string, string> = {}): Promise<string> {
  const init = await rawRequest(url, {
    method: 'POST',
    headers: { ...MCP_HEADERS, ...headers },
    body: INITIALIZE,
  });
  const id = init.headers['mcp-session-id'];
  if (init.status !== 200 || typeof id !== 'string')
    throw new Error(`initialize failed: ${init.status} ${init.body}`);
  await rawRequest(url, {
    method: 'POST',
    headers: { ...MCP_HEADERS, ...headers, 'mcp-session-id': id, 'mcp-protocol-version': '2025-11-25' },
    body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }),
  });
  return id;
}

export interface HeldRequest {
  /** Sends the rest of the body; resolves with the response. */
  finish(rest: string): Promise<RawResponse>;
  /** The response (or the connection error) however the request ends. */
  response: Promise<RawResponse>;
}

/**
 * Starts a POST and sends only the first part of its body: the server holds the request open (in flight) until
 * `finish` sends the rest. Content-Length covers the whole body.
 */
export function holdRequest(
  url: string,
  headers: Record<string, string>,
  body: string,
  sendFirst: number,
): HeldRequest {
  let resolveResponse!: (r: RawResponse) => void;
  let rejectResponse!: (e: unknown) => void;
  const response = new Promise<RawResponse>((res, rej) => {
    resolveResponse = res;
    rejectResponse = rej;
  });
  const req = request(
    url,
    {
      method: 'POST',
      headers: { ...headers, 'content-length': String(Buffer.byteLength(body)) },
      agent: false,
    },
    (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () =>
        resolveResponse({
          status: res.statusCode ?? 0,
          headers: res.headers,
          body: Buffer.concat(chunks).toString('utf8'),
        }),
      );
      res.on('error', rejectResponse);
    },
  );
  req.on('error', rejectResponse);
  req.flushHeaders();
  req.write(body.slice(0, sendFirst));
  return {
    response,
    finish(rest) {
      req.end(rest);
      return response;
    },
  };
}
