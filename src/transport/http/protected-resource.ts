import type { IncomingMessage, ServerResponse } from 'node:http';
import {
  getOAuthProtectedResourceMetadataUrl,
  type OAuthProtectedResourceMetadata,
} from '@modelcontextprotocol/server';
import type { OAuthConfig } from '../../config/oauth-schema.js';
import { replyJson } from './reply.js';

const WELL_KNOWN = '/.well-known/oauth-protected-resource';

/** This server as an OAuth protected resource (RFC 9728): its metadata document and where it is served. */
export interface ProtectedResource {
  /** The document's URL, as 401/403 challenges name it (`resource_metadata`). */
  metadataUrl: string;
  /** The scopes a client should ask for: catalog and runs. */
  scopes: readonly [string, string];
  /** Whether `path` is one of the document's locations. */
  serves(path: string): boolean;
  /** Answers a request for the document (GET/HEAD; anything else 405). No token needed. */
  reply(req: IncomingMessage, res: ServerResponse): void;
}

export function protectedResource(oauth: OAuthConfig): ProtectedResource {
  const resource = new URL(oauth.resource);
  const metadataUrl = getOAuthProtectedResourceMetadataUrl(resource);
  const scopes = [oauth.scopes.read, oauth.scopes.run] as const;
  const document: OAuthProtectedResourceMetadata = {
    resource: oauth.resource,
    authorization_servers: [oauth.issuer],
    scopes_supported: [...scopes],
    bearer_methods_supported: ['header'],
    resource_name: 'skills-mcp',
  };
  // The root form, the path-suffixed form for the configured resource and, when a proxy maps another path onto
  // it, the one for this server's own endpoint.
  const paths = new Set([WELL_KNOWN, new URL(metadataUrl).pathname, `${WELL_KNOWN}/mcp`]);
  return {
    metadataUrl,
    scopes,
    serves: (path) => paths.has(path),
    reply(req, res) {
      if (req.method !== 'GET' && req.method !== 'HEAD')
        return replyJson(res, 405, { error: 'method not allowed' }, { allow: 'GET, HEAD' });
      replyJson(res, 200, document, { 'cache-control': 'public, max-age=3600' });
    },
  };
}

/** RFC 6750 quoted-string: the values we put there are our own, but never let one break the header. */
const quoted = (v: string) => `"${v.replace(/["\\\r\n]/g, '')}"`;

/**
 * A `WWW-Authenticate: Bearer …` challenge naming the metadata document. No `error` when no token was sent
 * (RFC 6750 §3.1); `invalid_token` (401) or `insufficient_scope` (403) otherwise.
 */
export function bearerChallenge(
  pr: ProtectedResource,
  error?: { code: 'invalid_token' | 'insufficient_scope'; description: string; scopes?: readonly string[] },
): string {
  const params = [`resource_metadata=${quoted(pr.metadataUrl)}`];
  if (error !== undefined)
    params.push(`error=${quoted(error.code)}`, `error_description=${quoted(error.description)}`);
  params.push(`scope=${quoted((error?.scopes ?? pr.scopes).join(' '))}`);
  return `Bearer ${params.join(', ')}`;
}
