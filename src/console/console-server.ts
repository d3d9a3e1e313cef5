import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Logger } from '../log.js';
import { guardRequest } from './request-guard.js';
import { createSignInCookie } from './sign-in-cookie.js';
import type { RouteRequest, RouteResponse } from './route-types.js';

const MAX_BODY = 4096;

/** Sent with every response: no caching, referrer only to ourselves (the secret is in the path; without one a browser sends `Origin: null` on POST), no framing, no inline code. */
const SECURITY_HEADERS = {
  'cache-control': 'no-store',
  'referrer-policy': 'same-origin',
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'cross-origin-opener-policy': 'same-origin',
  'cross-origin-resource-policy': 'same-origin',
  'content-security-policy':
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; " +
    "form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
};

export interface ConsoleServer {
  /** `http://127.0.0.1:PORT/SECRET/` */
  url: string;
  close(): Promise<void>;
}

const header = (req: IncomingMessage, name: string): string | undefined => {
  const v = req.headers[name];
  return Array.isArray(v) ? v[0] : v;
};

function readBody(req: IncomingMessage): Promise<string | undefined> {
  return new Promise((resolve, reject) => {
    let size = 0;
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > MAX_BODY) {
        resolve(undefined);
        req.resume();
        return;
      }
      chunks.push(c);
    });
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

function send(res: ServerResponse, r: RouteResponse, head: boolean, cookie?: string) {
  res.writeHead(r.status, {
    ...SECURITY_HEADERS,
    'content-type': r.type,
    ...(r.location === undefined ? {} : { location: r.location }),
    ...(cookie === undefined ? {} : { 'set-cookie': cookie }),
  });
  res.end(head ? undefined : r.body);
}

/**
 * The console's HTTP listener: 127.0.0.1 only, a port the OS picks, every request through `guardRequest`,
 * then `route`. Refusals say nothing about the secret.
 */
export async function startConsoleServer(opts: {
  secret: string;
  log: Logger;
  route: (req: RouteRequest) => Promise<RouteResponse>;
  port?: number;
}): Promise<ConsoleServer> {
  const { secret, log } = opts;
  let port = 0;
  const signIn = createSignInCookie();
  const server = createServer((req, res) => {
    const guard = guardRequest(
      {
        method: req.method ?? '',
        url: req.url ?? '/',
        host: header(req, 'host'),
        origin: header(req, 'origin'),
        secFetchSite: header(req, 'sec-fetch-site'),
        secFetchMode: header(req, 'sec-fetch-mode'),
      },
      { port, secret },
    );
    if (!guard.ok) {
      if (guard.status !== 404 && guard.status !== 308)
        log.warn({ reason: guard.reason }, 'approval console refused a request');
      const text = guard.status === 404 ? 'Not found' : guard.status === 308 ? 'Moved' : 'Forbidden';
      const r: RouteResponse = { status: guard.status, type: 'text/plain; charset=utf-8', body: text };
      send(res, guard.status === 308 ? { ...r, location: guard.location } : r, false);
      return;
    }
    const method = req.method as RouteRequest['method'];
    // A page of the secret path signs the browser in; the secret-free page only reads the sign-in.
    const cookie = guard.secretless === true ? undefined : signIn.header(port);
    void (async () => {
      const body = method === 'POST' ? await readBody(req) : undefined;
      if (method === 'POST' && body === undefined) {
        send(res, { status: 413, type: 'text/plain; charset=utf-8', body: 'Too large' }, false);
        return;
      }
      const r = await opts.route({
        method,
        path: guard.path,
        contentType: header(req, 'content-type'),
        ...(body === undefined ? {} : { body }),
        ...(guard.secretless === true
          ? { secretless: true as const, signedIn: signIn.signedIn(header(req, 'cookie'), port) }
          : {}),
      });
      send(res, r, method === 'HEAD', cookie);
    })().catch((err: unknown) => {
      log.error({ err }, 'approval console request failed');
      if (!res.headersSent)
        send(res, { status: 500, type: 'text/plain; charset=utf-8', body: 'Error' }, false);
      else res.destroy();
    });
  });
  server.headersTimeout = 10_000;
  server.requestTimeout = 30_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 0, '127.0.0.1', () => resolve());
  });
  port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}/${secret}/`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
