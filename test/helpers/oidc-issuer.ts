import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, SignJWT, type CryptoKey, type JWK, type JWTPayload } from 'jose';
import Provider from 'oidc-provider';

/** A person of the test issuer: a client_credentials client whose `sub` is its client id. */
export interface TestPerson {
  id: string;
  groups: string[];
}

export interface OidcIssuer {
  /** The issuer URL (`iss` of its tokens), e.g. `http://127.0.0.1:PORT`. */
  issuer: string;
  /** A real access token from the issuer's token endpoint (client_credentials, RFC 8707 `resource`). */
  token(person: string, scope: string, resource: string): Promise<string>;
  /**
   * A token signed with the issuer's own key, with exactly these claims (for expired or wrong-issuer tokens); the
   * header says `typ: at+jwt` and the first key's `kid` unless told otherwise (`typ: null` leaves `typ` out).
   */
  sign(claims: JWTPayload, header?: { typ?: string | null; kid?: string }): Promise<string>;
  /** A token with the same header (`kid`) signed by a key the issuer does not publish. */
  signWithOtherKey(claims: JWTPayload): Promise<string>;
  /** Generates a key and publishes it in the issuer's JWKS under `kid`; `sign(…, { kid })` then signs with it. */
  publishKey(kid: string): Promise<void>;
  /** Takes `kid` out of the published JWKS (tokens it signed stay signed). */
  unpublishKey(kid: string): void;
  /** The `Cache-Control` header the JWKS is served with from now on (none by default). */
  setJwksCacheControl(value: string | undefined): void;
  /** The status the JWKS endpoint answers with from now on (200, with the keys, by default; else an empty body). */
  setJwksStatus(status: number): void;
  /** How many times the JWKS has been fetched. */
  jwksFetches(): number;
  close(): Promise<void>;
}

const KID = 'test-key-1';
const secretOf = (id: string) => `${id}-client-secret-0123456789`;

/**
 * A real OpenID provider (`oidc-provider`) in this process on a loopback port it picks, minting JWT access tokens
 * (ES256) for any resource indicator it is asked for, with the scopes asked and a `groups` claim per person.
 */
export async function startOidcIssuer(people: TestPerson[], scopes: string[]): Promise<OidcIssuer> {
  const server: Server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const { privateKey, publicKey } = await generateKeyPair('ES256', { extractable: true });
  const jwk = { ...(await exportJWK(privateKey)), kid: KID, alg: 'ES256', use: 'sig' };
  // The JWKS is served from here, not by the provider, so keys can be published and withdrawn while it runs.
  const signing = new Map<string, CryptoKey>([[KID, privateKey]]);
  const published = new Map<string, JWK>([
    [KID, { ...(await exportJWK(publicKey)), kid: KID, alg: 'ES256', use: 'sig' }],
  ]);
  let cacheControl: string | undefined;
  let jwksStatus = 200;
  let fetches = 0;
  const groups = new Map(people.map((p) => [p.id, p.groups]));
  const provider = new Provider(issuer, {
    clients: people.map((p) => ({
      client_id: p.id,
      client_secret: secretOf(p.id),
      grant_types: ['client_credentials'],
      redirect_uris: [],
      response_types: [],
      scope: scopes.join(' '),
      id_token_signed_response_alg: 'ES256',
    })),
    jwks: { keys: [jwk] },
    scopes,
    ttl: { ClientCredentials: 600 },
    features: {
      devInteractions: { enabled: false },
      clientCredentials: { enabled: true },
      resourceIndicators: {
        enabled: true,
        defaultResource: () => undefined,
        useGrantedResource: () => true,
        getResourceServerInfo: (_ctx, resource) => ({
          scope: scopes.join(' '),
          audience: resource,
          accessTokenFormat: 'jwt',
          accessTokenTTL: 600,
          jwt: { sign: { alg: 'ES256' } },
        }),
      },
    },
    extraTokenClaims: (_ctx, token) => {
      const id = (token as { clientId?: string }).clientId;
      return { groups: id === undefined ? [] : (groups.get(id) ?? []) };
    },
  });
  const handle = provider.callback();
  server.on('request', (req, res) => {
    if (req.method !== 'GET' || req.url !== '/jwks') return void handle(req, res);
    fetches++;
    if (jwksStatus !== 200) return void res.writeHead(jwksStatus).end();
    res.writeHead(200, {
      'content-type': 'application/jwk-set+json',
      ...(cacheControl === undefined ? {} : { 'cache-control': cacheControl }),
    });
    res.end(JSON.stringify({ keys: [...published.values()] }));
  });

  const signWith = (
    key: CryptoKey,
    claims: JWTPayload,
    header: { typ?: string | null; kid?: string } = {},
  ) => {
    const typ = header.typ === undefined ? 'at+jwt' : header.typ;
    return new SignJWT(claims)
      .setProtectedHeader({ alg: 'ES256', kid: header.kid ?? KID, ...(typ === null ? {} : { typ }) })
      .sign(key);
  };

  return {
    issuer,
    async token(person, scope, resource) {
      const res = await fetch(`${issuer}/token`, {
        method: 'POST',
        headers: {
          'content-type': 'application/x-www-form-urlencoded',
          authorization: `Basic ${Buffer.from(`${person}:${secretOf(person)}`).toString('base64')}`,
        },
        body: new URLSearchParams({ grant_type: 'client_credentials', scope, resource }),
      });
      const body = (await res.json()) as { access_token?: string };
      if (!res.ok || body.access_token === undefined)
        throw new Error(`token endpoint: ${res.status} ${JSON.stringify(body)}`);
      return body.access_token;
    },
    sign(claims, header) {
      const key = signing.get(header?.kid ?? KID);
      if (key === undefined) throw new Error(`no key ${header?.kid}`);
      return signWith(key, claims, header);
    },
    async signWithOtherKey(claims) {
      const other = await generateKeyPair('ES256');
      return signWith(other.privateKey, claims);
    },
    async publishKey(kid) {
      const pair = await generateKeyPair('ES256');
      signing.set(kid, pair.privateKey);
      published.set(kid, { ...(await exportJWK(pair.publicKey)), kid, alg: 'ES256', use: 'sig' });
    },
    unpublishKey: (kid) => void published.delete(kid),
    setJwksCacheControl: (value) => void (cacheControl = value),
    setJwksStatus: (status) => void (jwksStatus = status),
    jwksFetches: () => fetches,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
