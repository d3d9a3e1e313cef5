import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/client';
import { openPgAuditLog } from '../../../src/audit/postgres/open-pg-audit-log.js';
import type { ExportedEvent } from '../../../src/audit/parse-event-row.js';
import { gatedFixture, type GatedFixture } from '../../helpers/gated-fixture.js';
import {
  createAuditDb,
  startTestPostgres,
  type TestAuditDb,
  type TestPostgres,
} from '../../helpers/postgres.js';
import { runCli } from '../../helpers/run-cli.js';
import { waitFor } from '../../helpers/wait-for.js';
import { connectClient, type Connected } from '../../http/helpers/connect-client.js';
import { servedUrl, spawnCli, type SpawnedServer } from '../../http/helpers/spawn-server.js';

export const TOKEN = 'team-state-test-token-0123456789';

/** A tool result as the modern era sends it (asked for by hand, so a retry can go to another replica). */
export type Raw = {
  requestState?: string;
  isError?: boolean;
  content?: { text?: string }[];
  _meta?: Record<string, unknown>;
};
export const textOf = (r: Raw): string => r.content?.map((x) => x.text ?? '').join('') ?? '';

/** One PostgreSQL this test started, its audit database, a skills fixture and a shared state key. */
export interface Team {
  pg: TestPostgres;
  db: TestAuditDb;
  fx: GatedFixture;
  servers: SpawnedServer[];
  /**
   * Starts a real `serve --http --audit postgres://…` process (its local state in `state-<name>`) and a client with
   * `token` (default: the static token the server is given; with OAuth in the config, give an access token).
   * `config` replaces the team's config file for this one.
   */
  start(
    name: string,
    token?: string,
    o?: { config?: string },
  ): Promise<{ s: SpawnedServer; c: Client; url: string }>;
  /** The folder of a replica's local state (`XDG_STATE_HOME`). */
  stateHome(name: string): string;
  /** Another client of a server, with its own bearer token. */
  connect(url: string, token: string): Promise<Client>;
  /** Every event of the shared log, in chain order. */
  events(): Promise<ExportedEvent[]>;
  /** The events, once `found` holds for them (polling the log; rejects after `ms`, naming `what`). */
  eventsWhen(what: string, found: (ev: ExportedEvent[]) => boolean, ms?: number): Promise<ExportedEvent[]>;
  /** `skills-mcp audit verify --audit postgres://…`. */
  verify(): ReturnType<typeof runCli>;
  /** Stops the clients and the servers this test started (SIGTERM, or SIGKILL), PostgreSQL, and removes the files. */
  cleanup(signal?: NodeJS.Signals): Promise<void>;
}

export async function startTeam(config: string, o: { staticToken?: boolean } = {}): Promise<Team> {
  const staticToken = o.staticToken ?? true;
  const pg = startTestPostgres();
  const db = await createAuditDb(pg);
  const fx = gatedFixture(config);
  const stateKey = join(fx.dir, 'state.key');
  writeFileSync(stateKey, `${randomBytes(32).toString('hex')}\n`, { mode: 0o600 });
  chmodSync(stateKey, 0o600);
  const servers: SpawnedServer[] = [];
  const clients: Connected[] = [];
  const env = { PGPASSWORD: db.writer.password };
  const team: Team = {
    pg,
    db,
    fx,
    servers,
    async start(name, token = TOKEN, o = {}) {
      let configFile = fx.configFile;
      if (o.config !== undefined) {
        configFile = join(fx.dir, `skills-mcp-${name}.yaml`);
        writeFileSync(configFile, o.config);
      }
      const s = spawnCli(
        [
          '--http',
          '--port',
          '0',
          '--skills',
          fx.skills,
          '--config',
          configFile,
          '--no-watch',
          '--audit',
          db.writerUrl,
        ],
        {
          ...(staticToken ? { SKILLS_MCP_TOKEN: TOKEN } : {}),
          SKILLS_MCP_STATE_KEY_FILE: stateKey,
          ...env,
          XDG_STATE_HOME: join(fx.dir, `state-${name}`),
        },
      );
      servers.push(s);
      const url = await servedUrl(s);
      const c = await connectClient(url, 'auto', token);
      clients.push(c);
      return { s, c: c.client, url };
    },
    stateHome: (name) => join(fx.dir, `state-${name}`),
    async connect(url, token) {
      const c = await connectClient(url, 'auto', token);
      clients.push(c);
      return c.client;
    },
    eventsWhen: (what, found, ms = 15_000) =>
      waitFor(
        async () => {
          const ev = await team.events();
          return found(ev) && ev;
        },
        ms,
        what,
      ),
    async events() {
      const log = openPgAuditLog({ url: db.writerUrl, env });
      try {
        const out: ExportedEvent[] = [];
        for await (const e of log.exportEvents()) out.push(e);
        return out;
      } finally {
        await log.close();
      }
    },
    verify: () => runCli(['audit', 'verify', '--audit', db.writerUrl], { env }),
    async cleanup(signal = 'SIGTERM') {
      for (const c of clients) await c.client.close().catch(() => undefined);
      for (const s of servers) {
        if (s.proc.exitCode === null && s.proc.signalCode === null) s.proc.kill(signal);
        await s.exited;
      }
      fx.cleanup();
      pg.cleanup();
    },
  };
  return team;
}

/** A modern-era tools/call; with `retry`, the person's `decision` and the state of the call it continues. */
export const tool = (
  c: Client,
  name: string,
  args: Record<string, unknown>,
  retry?: { state: string | undefined; decision?: string },
): Promise<Raw> =>
  c.request(
    {
      method: 'tools/call',
      params: {
        name,
        arguments: args,
        ...(retry === undefined
          ? {}
          : {
              inputResponses: {
                approval: { action: 'accept', content: { decision: retry.decision ?? 'approved' } },
              },
              requestState: retry.state,
            }),
      },
    } as never,
    { allowInputRequired: true } as never,
  ) as Promise<Raw>;

/** The names of the files runs left in a replica's call folders. */
export function runOutputs(team: Team, replica: string): string[] {
  const runs = join(team.stateHome(replica), 'skills-mcp', 'runs');
  if (!existsSync(runs)) return [];
  return readdirSync(runs, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => e.name);
}
