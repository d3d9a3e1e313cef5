import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll } from 'vitest';
import * as z from 'zod';
import { ConfigSchema } from '../../../src/config/config-schema.js';
import { silentLogger } from '../../../src/log.js';
import { createSkillsServer } from '../../../src/mcp/create-server.js';
import type { SessionInfo } from '../../../src/runner/session.js';
import { loadCatalog, type Catalog } from '../../../src/skills/catalog.js';
import { watchCatalog } from '../../../src/skills/watch-catalog.js';
import type { HttpLimits } from '../../../src/transport/http/http-limits.js';
import { serveOverHttp, type HttpServing } from '../../../src/transport/http/serve-over-http.js';
import { servedUrl, spawnCli, type SpawnedServer } from './spawn-server.js';

export const REPO_SKILLS = resolve(import.meta.dirname, '../../../skills');

export interface StartedHttp {
  url: string;
  origin: string;
  http: HttpServing;
  /** The skills folder being served (a temp copy of the repo's skills: tests may edit it). */
  dir: string;
  /** Every SessionInfo the server built an instance for, in order. */
  sessions: SessionInfo[];
  /** Sessions the transport reported ended (what `runner.endSession` would record), in order. */
  ended: { id: string; reason: string }[];
  /** Answers every `hold` call made so far (see `StartOptions.hold`). */
  release(): void;
  stop(): Promise<void>;
}

export interface StartOptions {
  token?: string;
  limits?: Partial<HttpLimits>;
  now?: () => number;
  allowedHosts?: string[];
  allowedOrigins?: string[];
  /** Adds a `hold` tool that answers only once `release()` is called: a request kept in flight on purpose. */
  hold?: boolean;
}

/** Copies the repo's skills to a temp folder. */
export function copySkills(): string {
  const dir = mkdtempSync(join(tmpdir(), 'skills-mcp-http-'));
  cpSync(REPO_SKILLS, dir, { recursive: true });
  return dir;
}

/** The real server (catalog, hot reload watcher, MCP factory) served over HTTP on 127.0.0.1, port 0. */
export async function startHttp(opts: StartOptions = {}): Promise<StartedHttp> {
  const dir = copySkills();
  const log = silentLogger();
  const config = ConfigSchema.parse({ skills: [dir] });
  let catalog: Catalog = loadCatalog([dir]);
  const server = createSkillsServer({ catalog: () => catalog, config, log, version: '0.0.0-test' });
  const watcher = watchCatalog({
    roots: [dir],
    load: () => loadCatalog([dir]),
    current: () => catalog,
    onChange: (next, diff) => {
      catalog = next;
      server.catalogChanged(diff);
    },
    log,
    debounceMs: 50,
  });
  watcher.start();
  let release!: () => void;
  let held = new Promise<void>((r) => (release = r));
  const sessions: SessionInfo[] = [];
  const ended: { id: string; reason: string }[] = [];
  const http = await serveOverHttp({
    server: {
      build: (session) => {
        sessions.push(session);
        const built = server.build(session);
        if (opts.hold === true) {
          built.registerTool(
            'hold',
            { description: 'Answers once the test releases it.', inputSchema: z.object({}) },
            async () => {
              await held;
              return { content: [{ type: 'text', text: 'released' }] };
            },
          );
        }
        return built;
      },
      onChanged: (listener) => server.onChanged(listener),
    },
    log,
    onSessionEnd: (session, reason) => void ended.push({ id: session.id, reason }),
    host: '127.0.0.1',
    port: 0,
    token: opts.token,
    allowedHosts: opts.allowedHosts ?? [],
    allowedOrigins: opts.allowedOrigins ?? [],
    ...(opts.limits === undefined ? {} : { limits: opts.limits }),
    ...(opts.now === undefined ? {} : { now: opts.now }),
  });
  return {
    url: http.url,
    origin: new URL(http.url).origin,
    http,
    dir,
    sessions,
    ended,
    release() {
      release();
      held = new Promise<void>((r) => (release = r));
    },
    async stop() {
      watcher.close();
      await http.close({ force: true });
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * The built binary serving a temp copy of the repo's skills over HTTP for the tests of a describe block (started
 * before them, stopped with SIGTERM and its folder removed after). `url()` and `server()` are valid inside tests.
 */
export function spawnedHttpServer(env: Record<string, string> = {}): {
  url: () => string;
  server: () => SpawnedServer;
} {
  let dir: string | undefined;
  let server: SpawnedServer | undefined;
  let url: string | undefined;
  beforeAll(async () => {
    dir = copySkills();
    server = spawnCli(['--http', '--port', '0', '--skills', dir, '--no-watch'], env);
    url = await servedUrl(server);
  });
  afterAll(async () => {
    server?.proc.kill('SIGTERM');
    await server?.exited;
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  });
  return { url: () => url!, server: () => server! };
}
