// What several benches share: child processes stopped by their pid, a free loopback port, a PostgreSQL server in a
// temp folder with a migrated audit database, percentiles, and the plain-text table every bench prints.
import { spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chownSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import process from 'node:process';
import pg from 'pg';

export const out = (line = '') => void process.stdout.write(`${line}\n`);

export const percentile = (xs, p) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length === 0 ? null : s[Math.max(0, Math.ceil((p / 100) * s.length) - 1)];
};

export const round = (x, digits = 1) => (x === null || x === undefined ? null : Number(x.toFixed(digits)));

export const median = (xs) => {
  const s = xs.filter((x) => typeof x === 'number').sort((a, b) => a - b);
  if (s.length === 0) return null;
  const m = Math.floor(s.length / 2);
  return s.length % 2 === 1 ? s[m] : (s[m - 1] + s[m]) / 2;
};

export const freePort = () =>
  new Promise((ok, fail) => {
    const s = createServer();
    s.once('error', fail);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => ok(port));
    });
  });

/** A child process whose stderr is kept; `stop` ends it by its pid. */
export function child(command, args, env = {}) {
  const proc = spawn(command, args, { stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, ...env } });
  let stderr = '';
  proc.stderr.setEncoding('utf8').on('data', (d) => (stderr += d));
  const exited = new Promise((r) => proc.once('exit', (code, signal) => r(code ?? signal)));
  const stop = async () => {
    if (proc.exitCode === null && proc.signalCode === null) proc.kill('SIGTERM');
    await exited;
  };
  return { proc, exited, stop, stderr: () => stderr };
}

/** Prints rows as a table: the first row is the header, the first column left-aligned, the rest right-aligned. */
export function table(rows) {
  const widths = rows[0].map((_, c) => Math.max(...rows.map((r) => String(r[c]).length)));
  for (const [i, r] of rows.entries()) {
    out(
      r
        .map((cell, c) => (c === 0 ? String(cell).padEnd(widths[c]) : String(cell).padStart(widths[c])))
        .join('  '),
    );
    if (i === 0) out(widths.map((w) => '-'.repeat(w)).join('  '));
  }
}

/**
 * A PostgreSQL server in `tmp/pg` (unix socket only), an audit database migrated as its owner, a writer role.
 * Resolves with the writer's URL, its password as `env.PGPASSWORD`, a superuser `query` and `stop`.
 */
export async function startPostgres(tmp) {
  const root = '/usr/lib/postgresql';
  const version = existsSync(root) ? readdirSync(root).sort((a, b) => Number(b) - Number(a))[0] : undefined;
  if (version === undefined)
    throw new Error('no PostgreSQL server programs: run `node scripts/setup.mjs test`');
  const bin = join(root, version, 'bin');
  const dir = join(tmp, 'pg');
  mkdirSync(dir, { mode: 0o700 });
  const asRoot = process.getuid?.() === 0;
  if (asRoot) {
    const f = readFileSync('/etc/passwd', 'utf8')
      .split('\n')
      .find((l) => l.startsWith('postgres:'))
      .split(':');
    chownSync(dir, Number(f[2]), Number(f[3]));
  }
  const run = (program, args) => {
    const argv = asRoot
      ? ['/usr/sbin/runuser', '-u', 'postgres', '--', join(bin, program), ...args]
      : [join(bin, program), ...args];
    const r = spawnSync(argv[0], argv.slice(1), { encoding: 'utf8', cwd: dir, timeout: 60_000 });
    if (r.status !== 0) throw new Error(`${program}: ${r.stderr}`);
  };
  const data = join(dir, 'data');
  run('initdb', [
    '-D',
    data,
    '-U',
    'postgres',
    '-E',
    'UTF8',
    '--no-sync',
    '--auth-local=trust',
    '--auth-host=reject',
  ]);
  writeFileSync(join(data, 'pg_hba.conf'), 'local all postgres trust\nlocal all all scram-sha-256\n');
  run('pg_ctl', [
    '-D',
    data,
    '-l',
    join(dir, 'log'),
    '-w',
    '-o',
    `-k ${dir} -c listen_addresses=''`,
    'start',
  ]);
  const stop = () => run('pg_ctl', ['-D', data, '-m', 'fast', '-w', 'stop']);
  try {
    const owner = { user: 'bench_owner', password: randomBytes(12).toString('hex') };
    const writer = { user: 'bench_writer', password: randomBytes(12).toString('hex') };
    const su = new pg.Client({ host: dir, user: 'postgres', database: 'postgres' });
    await su.connect();
    await su.query(`CREATE ROLE ${owner.user} LOGIN PASSWORD '${owner.password}'`);
    await su.query(`CREATE ROLE ${writer.user} LOGIN PASSWORD '${writer.password}'`);
    await su.query(`CREATE DATABASE bench_audit OWNER ${owner.user}`);
    await su.query(`REVOKE ALL ON DATABASE bench_audit FROM PUBLIC`);
    await su.query(`GRANT CONNECT ON DATABASE bench_audit TO ${writer.user}`);
    await su.end();
    const { migratePgAudit } = await import('../dist/audit/postgres/migrate-pg-audit.js');
    const c = new pg.Client({
      host: dir,
      user: owner.user,
      password: owner.password,
      database: 'bench_audit',
    });
    await c.connect();
    await migratePgAudit(c, { writer: writer.user });
    await c.end();
    /** One query as the superuser, on a connection of its own. */
    const query = async (sql) => {
      const q = new pg.Client({ host: dir, user: 'postgres', database: 'bench_audit' });
      await q.connect();
      try {
        return (await q.query(sql)).rows;
      } finally {
        await q.end();
      }
    };
    return {
      url: `postgres://${writer.user}@/bench_audit?host=${encodeURIComponent(dir)}`,
      env: { PGPASSWORD: writer.password },
      query,
      stop,
    };
  } catch (e) {
    stop();
    throw e;
  }
}
