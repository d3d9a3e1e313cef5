import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tempDir } from './temp-dir.js';
import { waitFor } from './wait-for.js';

export const HAPROXY = '/usr/sbin/haproxy';

/** A replica behind the balancer: its name (the `x-replica` value that forces a request to it) and loopback port. */
export interface Replica {
  name: string;
  port: number;
}

export interface TestHaproxy {
  /** `http://127.0.0.1:PORT` */
  origin: string;
  port: number;
  pid: number;
  /** HAProxy's own output: its log (one line per request, with the replica that answered) and its warnings. */
  log(): string;
  /** The replica names that answered, one per logged request, in order. */
  servedBy(): string[];
  /** Stops it (SIGTERM to the pid it started) and removes its folder. */
  stop(): Promise<void>;
}

/** The header that forces one request to a replica, for tests only. */
export const FORCE_HEADER = 'x-replica';
/** The response header naming the replica that answered. */
export const SERVED_HEADER = 'x-served-by';

/**
 * The balancer configuration for `replicas`: 2025-era sessions stick to the replica that created them (learned
 * from the `Mcp-Session-Id` response header, matched on the request header), every other request goes round-robin;
 * a test may force one request to a replica with `x-replica: NAME`; each replica's `/healthz` is checked.
 */
export function haproxyConfig(port: number, replicas: readonly Replica[]): string {
  const lines = [
    'global',
    '    log stderr format raw local0 info',
    '    maxconn 4096',
    'defaults',
    '    mode http',
    '    log global',
    '    timeout connect 5s',
    '    timeout client 120s',
    '    timeout server 120s',
    '    timeout http-keep-alive 10s',
    // A connection to a replica is not kept for the client's next request: when a test kills a replica, an idle
    // client connection tied to it would be closed under the client's next request.
    '    option http-server-close',
    'frontend mcp',
    `    bind 127.0.0.1:${port}`,
    // One line per request: the replica that answered, the status, the method and path. No header is logged.
    '    log-format "req %b/%s %ST %HM %HP"',
    '    default_backend replicas',
    'backend replicas',
    '    balance roundrobin',
    '    stick-table type string len 64 size 100k expire 30m',
    '    stick on req.hdr(mcp-session-id)',
    '    stick store-response res.hdr(mcp-session-id)',
    ...replicas.map((r) => `    use-server ${r.name} if { req.hdr(${FORCE_HEADER}) -m str ${r.name} }`),
    // A forced request goes to its replica even while a health check under load has marked it down (without this
    // HAProxy ignores the use-server rule and balances the request elsewhere).
    `    force-persist if { req.hdr(${FORCE_HEADER}) -m found }`,
    `    http-response set-header ${SERVED_HEADER} %s`,
    '    option httpchk',
    '    http-check send meth GET uri /healthz hdr Host localhost',
    // A replica that is only slow (two busy cores) is not marked down; a dead one refuses the connection at once.
    '    timeout check 5s',
    ...replicas.map((r) => `    server ${r.name} 127.0.0.1:${r.port} check inter 1s fall 2 rise 1`),
  ];
  return `${lines.join('\n')}\n`;
}

/**
 * Debian's `haproxy` in the foreground (`-db`) on a loopback port the caller picked (`freePort`), its config in a
 * temp folder, as a child of this process. Resolves once it accepts connections.
 */
export async function startHaproxy(port: number, replicas: readonly Replica[]): Promise<TestHaproxy> {
  if (!existsSync(HAPROXY)) throw new Error(`${HAPROXY} is missing: run \`node scripts/setup.mjs test\``);
  const t = tempDir('skills-mcp-haproxy-');
  const cfg = join(t.dir, 'haproxy.cfg');
  writeFileSync(cfg, haproxyConfig(port, replicas));
  const proc: ChildProcess = spawn(HAPROXY, ['-db', '-f', cfg], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  proc.stdout!.setEncoding('utf8').on('data', (d: string) => (out += d));
  proc.stderr!.setEncoding('utf8').on('data', (d: string) => (out += d));
  const exited = new Promise<void>((r) => proc.once('exit', () => r()));
  let alive = true;
  void exited.then(() => (alive = false));
  const origin = `http://127.0.0.1:${port}`;
  const up = await waitFor(
    async () =>
      !alive ||
      (await fetch(`${origin}/healthz`).then(
        (r) => r.status === 200,
        () => false,
      )),
    10_000,
    `haproxy on ${origin}`,
  ).catch(() => undefined);
  if (!alive) throw new Error(`haproxy exited before listening:\n${out}`);
  if (up === undefined) {
    proc.kill('SIGKILL');
    throw new Error(`haproxy did not answer on ${origin}:\n${out}`);
  }
  return {
    origin,
    port,
    pid: proc.pid!,
    log: () => out,
    servedBy: () => [...out.matchAll(/^req replicas\/(\S+) /gm)].map((m) => m[1]!),
    async stop() {
      if (alive) proc.kill('SIGTERM');
      await exited;
      t.cleanup();
    },
  };
}
