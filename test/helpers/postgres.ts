import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import {
  chmodSync,
  chownSync,
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import pg from 'pg';
import { migratePgAudit } from '../../src/audit/postgres/migrate-pg-audit.js';
import { removeTree } from '../../src/envs/env-store.js';
import { tempDir } from './temp-dir.js';

/** Where the server programs are: Debian's `postgresql` package keeps them per version (the newest is taken). */
export function findPostgresBin(): string {
  const root = '/usr/lib/postgresql';
  const versions = existsSync(root)
    ? readdirSync(root)
        .filter((v) => existsSync(join(root, v, 'bin', 'pg_ctl')))
        .sort((a, b) => Number(b) - Number(a))
    : [];
  if (versions[0] !== undefined) return join(root, versions[0], 'bin');
  // Other systems put the server programs on PATH.
  if (existsSync('/usr/bin/pg_ctl') && existsSync('/usr/bin/initdb')) return '/usr/bin';
  throw new Error(
    `no PostgreSQL server programs (${root}/*/bin, /usr/bin): run \`node scripts/setup.mjs test\``,
  );
}

/** A PostgreSQL server this test started: its own data folder, a unix socket only (no TCP), stopped by the test. */
export interface TestPostgres {
  /** The folder holding the socket (`?host=` of a URL). */
  socketDir: string;
  dataDir: string;
  /** The server's log. */
  logFile: string;
  /** Runs SQL as the superuser `postgres` (connections from this test only: trust on its private socket). */
  superuser<T>(database: string, fn: (c: pg.Client) => Promise<T>): Promise<T>;
  /** Runs SQL as a role with its password (the server's INSERT-only role, say: what a holder of it can do). */
  as<T>(
    role: { user: string; password: string },
    database: string,
    fn: (c: pg.Client) => Promise<T>,
  ): Promise<T>;
  /** `postgres://USER@/DATABASE?host=SOCKET`: no password in it. */
  url(user: string, database: string): string;
  start(): void;
  /** Stops the server (fast shutdown; immediate, then SIGKILL of the postmaster if that fails). */
  stop(): void;
  /** Stops it and removes its folder. */
  cleanup(): void;
}

const isRoot = process.getuid?.() === 0;

function postgresIds(): { uid: number; gid: number } {
  const line = readFileSync('/etc/passwd', 'utf8')
    .split('\n')
    .find((l) => l.startsWith('postgres:'));
  if (line === undefined) throw new Error('no `postgres` user: install the postgresql package');
  const f = line.split(':');
  return { uid: Number(f[2]), gid: Number(f[3]) };
}

/** Runs a PostgreSQL program (or `cp`) as the user that owns the clusters: `postgres` when this runs as root. */
function runAsOwner(program: string, args: string[], cwd: string) {
  const argv = isRoot ? ['/usr/sbin/runuser', '-u', 'postgres', '--', program, ...args] : [program, ...args];
  return spawnSync(argv[0]!, argv.slice(1), { encoding: 'utf8', timeout: 60_000, cwd });
}

/**
 * An initdb'd cluster, made once per PostgreSQL build and user (its folder is named after the `initdb` binary's
 * version folder and change time) and then copied: `initdb` takes about a second, a copy a few milliseconds. It is
 * made in a folder of its own and renamed into place whole, so a concurrent test file or an interrupted run never
 * sees half of one.
 */
function templateCluster(bin: string): string {
  const initdb = join(bin, 'initdb');
  const key = `${basename(dirname(bin))}-${Math.trunc(statSync(initdb).ctimeMs)}-${process.getuid?.() ?? 0}`;
  const template = join(tmpdir(), `skills-mcp-pg-template-${key}`);
  const data = join(template, 'data');
  if (existsSync(join(data, 'PG_VERSION'))) return data;
  const staging = mkdtempSync(join(tmpdir(), 'skills-mcp-pg-staging-'));
  if (isRoot) {
    const { uid, gid } = postgresIds();
    chownSync(staging, uid, gid);
  }
  chmodSync(staging, 0o700);
  const args = ['-D', join(staging, 'data'), '-U', 'postgres', '-E', 'UTF8', '--no-sync'];
  const r = runAsOwner(initdb, [...args, '--auth-local=trust', '--auth-host=reject'], staging);
  if (r.status !== 0) {
    removeTree(staging);
    throw new Error(`initdb failed (${r.status ?? r.signal}): ${r.stderr}`);
  }
  try {
    renameSync(staging, template);
  } catch (e) {
    // Another test file made it first: theirs is as good.
    removeTree(staging);
    if (!existsSync(join(data, 'PG_VERSION'))) throw e;
  }
  return data;
}

/** A fresh cluster at `dataDir` (which must not exist yet): a copy of the template, owner and modes kept. */
function copyTemplateCluster(bin: string, dataDir: string): void {
  const template = templateCluster(bin);
  const r = runAsOwner('/bin/cp', ['-a', template, dataDir], dirname(dataDir));
  if (r.status !== 0)
    throw new Error(`copying the template cluster failed (${r.status ?? r.signal}): ${r.stderr}`);
}

/**
 * A fresh cluster in a temp folder (a copy of one made by `initdb` as an ordinary user: the package's `postgres` user
 * when this runs as root), then starts the server with `pg_ctl` listening on a unix socket in that folder and nowhere
 * else. Only the superuser connects without a password (trust, on a socket only root and `postgres` can reach); every
 * other role needs its password (scram-sha-256).
 */
export function startTestPostgres(): TestPostgres {
  const bin = findPostgresBin();
  const t = tempDir('skills-mcp-pg-');
  const dataDir = join(t.dir, 'data');
  const logFile = join(t.dir, 'server.log');
  if (isRoot) {
    const { uid, gid } = postgresIds();
    chownSync(t.dir, uid, gid);
  }
  chmodSync(t.dir, 0o700);
  const run = (program: string, args: string[]) => runAsOwner(join(bin, program), args, t.dir);
  const must = (program: string, args: string[]) => {
    const r = run(program, args);
    if (r.status !== 0)
      throw new Error(
        `${program} failed (${r.status ?? r.signal}): ${r.stderr}${existsSync(logFile) ? readFileSync(logFile, 'utf8') : ''}`,
      );
  };
  copyTemplateCluster(bin, dataDir);
  const hba = join(dataDir, 'pg_hba.conf');
  writeFileSync(hba, 'local all postgres trust\nlocal all all scram-sha-256\n');
  const start = () =>
    must('pg_ctl', [
      '-D',
      dataDir,
      '-l',
      logFile,
      '-w',
      '-t',
      '30',
      '-o',
      `-k ${t.dir} -c listen_addresses=''`,
      'start',
    ]);
  let running = false;
  const stop = () => {
    if (!running) return;
    running = false;
    if (run('pg_ctl', ['-D', dataDir, '-m', 'fast', '-w', '-t', '20', 'stop']).status === 0) return;
    if (run('pg_ctl', ['-D', dataDir, '-m', 'immediate', '-w', '-t', '10', 'stop']).status === 0) return;
    const pidFile = join(dataDir, 'postmaster.pid');
    const pid = existsSync(pidFile) ? Number(readFileSync(pidFile, 'utf8').split('\n')[0]) : NaN;
    if (Number.isSafeInteger(pid) && pid > 1) process.kill(pid, 'SIGKILL');
  };
  start();
  running = true;
  const url = (user: string, database: string) =>
    `postgres://${user}@/${database}?host=${encodeURIComponent(t.dir)}`;
  return {
    socketDir: t.dir,
    dataDir,
    logFile,
    url,
    superuser: (database, fn) => connected({ host: t.dir, user: 'postgres', database }, fn),
    as: (role, database, fn) => connected({ host: t.dir, ...role, database }, fn),
    start() {
      start();
      running = true;
    },
    stop,
    cleanup() {
      stop();
      t.cleanup();
    },
  };
}

async function connected<T>(config: pg.ClientConfig, fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const c = new pg.Client(config);
  await c.connect();
  try {
    return await fn(c);
  } finally {
    await c.end();
  }
}

/** The audit database of a test: its owner, the server's INSERT-only role, and their passwords. */
export interface TestAuditDb {
  database: string;
  owner: { user: string; password: string };
  writer: { user: string; password: string };
  /** The writer's URL (no password in it). */
  writerUrl: string;
}

/** Creates a database owned by a non-superuser, migrates the audit schema as that owner, and a writer role. */
export async function createAuditDb(server: TestPostgres, database = 'skills_mcp'): Promise<TestAuditDb> {
  const owner = { user: `${database}_owner`, password: randomBytes(12).toString('hex') };
  const writer = { user: `${database}_writer`, password: randomBytes(12).toString('hex') };
  await server.superuser('postgres', async (c) => {
    await c.query(`CREATE ROLE ${owner.user} LOGIN PASSWORD '${owner.password}'`);
    await c.query(`CREATE ROLE ${writer.user} LOGIN PASSWORD '${writer.password}'`);
    await c.query(`CREATE DATABASE ${database} OWNER ${owner.user}`);
    await c.query(`REVOKE ALL ON DATABASE ${database} FROM PUBLIC`);
    await c.query(`GRANT CONNECT ON DATABASE ${database} TO ${writer.user}`);
  });
  await server.as(owner, database, (c) => migratePgAudit(c, { writer: writer.user }));
  return { database, owner, writer, writerUrl: server.url(writer.user, database) };
}
