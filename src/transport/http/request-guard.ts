import type { IncomingMessage, ServerResponse } from 'node:http';
import { hostHeaderValidation, originValidation } from '@modelcontextprotocol/node';
import { isLoopbackHost } from './is-loopback-host.js';
import { replyJsonRpcError } from './reply.js';

const LOOPBACK_NAMES = ['localhost', '127.0.0.1', '[::1]'];
const WILDCARDS = new Set(['0.0.0.0', '::', '[::]']);

/** `example.com`, `example.com:8443`, `[::1]:3333` or `https://example.com` → the bare hostname the guards compare. */
export function hostnameOf(value: string): string | undefined {
  const v = value.trim();
  if (/^[a-z][a-z0-9+.-]*:\/\/\*$/i.test(v)) return v.toLowerCase();
  const bareIpv6 = !v.includes('://') && !v.startsWith('[') && v.split(':').length > 2;
  try {
    return new URL(v.includes('://') ? v : `http://${bareIpv6 ? `[${v}]` : v}`).hostname || undefined;
  } catch {
    return undefined;
  }
}

export interface RequestGuardOptions {
  /** The bind address: a specific address is accepted as a Host name. */
  host: string;
  /** Extra Host values (config `http.allowed_hosts`). */
  allowedHosts: readonly string[];
  /** Extra Origin values (config `http.allowed_origins`): hostnames, origins, or `<scheme>://*`. */
  allowedOrigins: readonly string[];
}

/** A Host header the way clients send it: a DNS name or IPv4 address, or a bracketed IPv6, then an optional port. */
const WELL_FORMED_HOST = /^(?:[A-Za-z0-9](?:[A-Za-z0-9.-]{0,252})|\[[0-9A-Fa-f:.]{2,45}\])(?::[0-9]{1,5})?$/;

export const isWellFormedHost = (value: string | undefined): boolean =>
  value !== undefined && WELL_FORMED_HOST.test(value);

/**
 * DNS-rebinding guard, applied to every MCP request whatever the bind address: the Host header must name this
 * server (loopback names, the bind address, or an allowed host), and a browser's Origin, when present, must be a
 * loopback or allowed origin. A rejected request has been answered (400 for a malformed Host, else 403) when the guard returns
 * false.
 */
export function createRequestGuard(
  opts: RequestGuardOptions,
): (req: IncomingMessage, res: ServerResponse) => boolean {
  const hosts = new Set(LOOPBACK_NAMES);
  if (!WILDCARDS.has(opts.host) && !isLoopbackHost(opts.host)) {
    const bound = hostnameOf(opts.host);
    if (bound !== undefined) hosts.add(bound);
  }
  for (const h of opts.allowedHosts) {
    const name = hostnameOf(h);
    if (name !== undefined) hosts.add(name);
  }
  const origins = new Set(LOOPBACK_NAMES);
  for (const o of opts.allowedOrigins) {
    const name = hostnameOf(o);
    if (name !== undefined) origins.add(name);
  }
  const validHost = hostHeaderValidation([...hosts]);
  const validOrigin = originValidation([...origins]);
  return (req, res) => {
    if (!isWellFormedHost(req.headers.host)) {
      replyJsonRpcError(res, 400, -32000, 'Bad Request: malformed Host header', { connection: 'close' });
      return false;
    }
    return validHost(req, res) && validOrigin(req, res);
  };
}
