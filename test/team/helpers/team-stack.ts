import { randomBytes } from 'node:crypto';
import { chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { gatedFixture, writeTestSkill, type GatedFixture } from '../../helpers/gated-fixture.js';
import { FORCE_HEADER, SERVED_HEADER, startHaproxy, type TestHaproxy } from '../../helpers/haproxy.js';
import { freePort } from '../../helpers/free-port.js';
import { startOidcIssuer, type OidcIssuer } from '../../helpers/oidc-issuer.js';
import type { Era } from '../../http/helpers/connect-client.js';
import { servedUrl, spawnCli, type SpawnedServer } from '../../http/helpers/spawn-server.js';

export const SCOPES = ['skills:read', 'skills:run'];
export const BOTH = 'skills:read skills:run';
export const REPLICAS = ['r1', 'r2', 'r3'] as const;
export type ReplicaName = (typeof REPLICAS)[number];

export interface TeamReplica {
  name: ReplicaName;
  port: number;
  /** The running process (replaced by `restart`). */
  server: SpawnedServer;
  /** Its own SQLite audit log, unless the stack was given a shared `--audit`. */
  auditPath: string;
  /** Its local state folder (`XDG_STATE_HOME`): with a PostgreSQL log, its run folders and console link file. */
  stateHome: string;
}

/** Where a client's requests go: `pin` sends every request to one replica, `next` only the next one. */
export interface Routing {
  pin?: ReplicaName;
  next?: ReplicaName;
  /** The replica that answered each request, in order (from HAProxy's `x-served-by`). */
  served: string[];
}

export interface TeamClient {
  client: Client;
  routing: Routing;
  /** Approval forms shown to this client. */
  asked: { count: number };
  /** Called when a form is shown, before the client answers it. */
  onAsk?: () => void;
}

export interface TeamStack {
  idp: OidcIssuer;
  fx: GatedFixture;
  haproxy: TestHaproxy;
  replicas: TeamReplica[];
  /** The balancer's MCP endpoint, which is also the tokens' audience. */
  url: string;
  /** The hex secret in the shared state key file. */
  stateKey: string;
  /** Every token minted so far (for the secrecy checks). */
  tokens: string[];
  mint(person: string, scope?: string, audience?: string): Promise<string>;
  /**
   * A real MCP client through the balancer, answering every approval form with `decision` (default approved);
   * `pin` sends all its requests, the first included, to one replica; `forms: false` declares no elicitation (a
   * client that cannot show an approval form, whose approvals go to the approval console).
   */
  connect(
    era: Era,
    token: string,
    o?: { decision?: string; pin?: ReplicaName; forms?: boolean },
  ): Promise<TeamClient>;
  /** Stops the replicas (SIGTERM), leaving the balancer and the issuer up. */
  stopReplicas(): Promise<void>;
  /** Starts a replica that exited again, on its port. */
  restart(name: ReplicaName): Promise<void>;
  stop(): Promise<void>;
}

/** A skill that sleeps `seconds` (default 0) then prints `{"slept": …}`: long enough to kill the replica running it. */
const SLEEPER = `import json, sys, time
d = json.load(sys.stdin)
time.sleep(float(d.get("seconds", 0)))
print(json.dumps({"slept": d.get("seconds", 0)}))
`;

/** The approval console on every replica (never opening a browser): how long a call is held, when it times out. */
export interface ConsoleOptions {
  waitMs: number;
  timeoutMs: number;
}

/**
 * The whole team set-up on loopback: a real OpenID issuer (Alice in `ops`, Bob in `dev`, Reader), three
 * `node dist/cli.js --http` replicas sharing one state key file and one config (approval mode ask, OAuth with the
 * balancer's address as the resource), each with its own state folder, and HAProxy in front. `audit` gives every
 * replica the same `--audit` (a PostgreSQL URL); otherwise each has its own SQLite log. `console` turns the approval
 * console on; `config` is appended to the config file (top-level keys other than `approval` and `http`).
 */
export async function startTeamStack(
  o: { audit?: string; env?: Record<string, string>; config?: string; console?: ConsoleOptions } = {},
): Promise<TeamStack> {
  const idp = await startOidcIssuer(
    [
      { id: 'alice', groups: ['ops'] },
      { id: 'bob', groups: ['dev'] },
      { id: 'reader', groups: [] },
    ],
    SCOPES,
  );
  const fx = gatedFixture('');
  writeTestSkill(fx.skills, 'sleeper', {
    description: 'Sleeps a while. Use in tests.',
    frontmatter: 'input_schema:\n  type: object\n  properties:\n    seconds: { type: number }\n',
    script: SLEEPER,
  });
  const port = await freePort();
  const url = `http://127.0.0.1:${port}/mcp`;
  const consoleLines =
    o.console === undefined
      ? ''
      : '  console: true\n  console_open_browser: false\n' +
        `  console_wait_ms: ${o.console.waitMs}\n  timeout_ms: ${o.console.timeoutMs}\n`;
  writeFileSync(
    fx.configFile,
    `approval:\n  mode: ask\n${consoleLines}  rules:\n    - { skill: sleeper, action: allow }\nhttp:\n  oauth:\n    issuer: ${idp.issuer}\n    resource: ${url}\n${o.config ?? ''}`,
  );
  const stateKey = randomBytes(32).toString('hex');
  const keyFile = join(fx.dir, 'state.key');
  writeFileSync(keyFile, `${stateKey}\n`, { mode: 0o600 });
  chmodSync(keyFile, 0o600);

  const stateHome = (name: ReplicaName) => join(fx.dir, name, 'state');
  const spawnReplica = async (name: ReplicaName, port: number) => {
    const server = spawnCli(
      [
        '--http',
        '--port',
        String(port),
        ...fx.args.slice(0, 4),
        '--no-watch',
        '--audit',
        o.audit ?? join(fx.dir, name, 'audit.db'),
        '--state-key-file',
        keyFile,
      ],
      { XDG_STATE_HOME: stateHome(name), ...o.env },
    );
    await servedUrl(server);
    return server;
  };
  const replicas = await Promise.all(
    REPLICAS.map(async (name): Promise<TeamReplica> => {
      mkdirSync(join(fx.dir, name));
      const port = await freePort();
      return {
        name,
        port,
        server: await spawnReplica(name, port),
        auditPath: join(fx.dir, name, 'audit.db'),
        stateHome: stateHome(name),
      };
    }),
  );
  const haproxy = await startHaproxy(port, replicas);

  const tokens: string[] = [];
  const live: Client[] = [];
  const restarts: Promise<void>[] = [];
  const stopReplicas = async () => {
    for (const r of replicas) {
      if (r.server.proc.exitCode === null && r.server.proc.signalCode === null) r.server.proc.kill('SIGTERM');
      await r.server.exited;
    }
  };
  return {
    idp,
    fx,
    haproxy,
    replicas,
    url,
    stateKey,
    tokens,
    async mint(person, scope = BOTH, audience = url) {
      const t = await idp.token(person, scope, audience);
      tokens.push(t);
      return t;
    },
    async connect(era, token, { decision = 'approved', pin, forms = true } = {}) {
      const routing: Routing = { served: [], ...(pin === undefined ? {} : { pin }) };
      const routed = async (input: string | URL | Request, init?: RequestInit) => {
        const headers = new Headers(init?.headers);
        const to = routing.next ?? routing.pin;
        delete routing.next;
        if (to !== undefined) headers.set(FORCE_HEADER, to);
        const res = await fetch(input, { ...init, headers });
        routing.served.push(res.headers.get(SERVED_HEADER) ?? '?');
        return res;
      };
      const client = new Client(
        { name: 'team-test', version: '1.0.0' },
        { capabilities: forms ? { elicitation: { form: {} } } : {}, versionNegotiation: { mode: era } },
      );
      const transport = new StreamableHTTPClientTransport(new URL(url), {
        requestInit: { headers: { authorization: `Bearer ${token}` } },
        fetch: routed,
      });
      const c: TeamClient = { client, routing, asked: { count: 0 } };
      if (forms) {
        client.setRequestHandler('elicitation/create', () => {
          c.asked.count++;
          c.onAsk?.();
          return Promise.resolve({ action: 'accept', content: { decision } });
        });
      }
      await client.connect(transport);
      live.push(client);
      return c;
    },
    stopReplicas,
    restart(name) {
      const r = replicas.find((x) => x.name === name)!;
      const done = (async () => {
        await r.server.exited;
        r.server = await spawnReplica(name, r.port);
      })();
      restarts.push(done);
      return done;
    },
    async stop() {
      await Promise.allSettled(restarts);
      for (const c of live.splice(0)) await c.close().catch(() => undefined);
      await stopReplicas();
      await haproxy.stop();
      await idp.close();
      fx.cleanup();
    },
  };
}

/** The text of a tool result's content. */
export const textOf = (r: { content?: unknown }) =>
  ((r.content as { type: string; text?: string }[] | undefined) ?? []).map((c) => c.text ?? '').join('\n');
