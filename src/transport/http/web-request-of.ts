import type { IncomingMessage } from 'node:http';

/**
 * The web `Request` the SDK's HTTP entry points (`isLegacyRequest`, `createMcpHandler`'s `fetch`) are given for a
 * request whose body has already been read and parsed: its method, URL and headers (built as the SDK's
 * `toWebRequest` builds them) and `signal`, which is all they read when handed the parsed body. It carries no body:
 * anything that would read one (`text()`, `body`, `clone()`) throws, so a reader that appears in a later SDK fails
 * loudly instead of seeing an empty body. Building a real `Request` with the body copied into a stream cost more
 * than the rest of the request's routing.
 */
export function webRequestOf(req: IncomingMessage, signal: AbortSignal): Request {
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    if (value === undefined || name.startsWith(':')) continue;
    if (Array.isArray(value)) for (const item of value) headers.append(name, item);
    else headers.set(name, value);
  }
  const host = req.headers.host ?? 'localhost';
  return Object.create(Request.prototype, {
    method: { value: (req.method ?? 'GET').toUpperCase(), enumerable: true },
    url: { value: `http://${host}${req.url ?? '/'}`, enumerable: true },
    headers: { value: headers, enumerable: true },
    signal: { value: signal, enumerable: true },
  }) as Request;
}
