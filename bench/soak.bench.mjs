// A long mixed load on the built server ("npm run bench soak"), with each audit store: one `node dist/cli.js --http`
// writing to SQLite and one writing to PostgreSQL (a server this bench starts in a temp folder), side by side for
// the same minutes so both see the same machine. Per server, at once:
// - read-only: BENCH_SOAK_READERS modern-era clients looping the read-only tool `markdown-toc`, each reconnecting
//   every 200 calls;
// - gated: BENCH_SOAK_RUNNERS modern-era clients looping `csv-stats` (allowed by a policy rule, so each call runs
//   the whole gated pipeline: records, policy, a sandboxed run, its result);
// - sessions: one 2025-era client opening a session, making 5 read-only calls, and half the time ending it, half the
//   time walking away (left to the idle timeout, 60 s here), over and over.
// Every BENCH_SOAK_SAMPLE_S seconds each server is sampled: RSS and open fds (from /proc), 2025-era sessions and
// in-flight requests (/healthz with the token), the log's size on disk (SQLite file + WAL; pg_database_size) and
// its events. The table prints one row per minute; every sample goes to bench/results/soak.json. After the load the
// server is stopped and `audit verify` runs on each log.
//
// Knobs: BENCH_SOAK_MINUTES (default 15), BENCH_SOAK_READERS (default 4), BENCH_SOAK_RUNNERS (default 1),
// BENCH_SOAK_SAMPLE_S (default 10), BENCH_SOAK_STORES (default "sqlite,postgres").
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import {
  chmodSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import os from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import process from 'node:process';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import Database from 'better-sqlite3';
import { removeTree } from '../dist/envs/env-store.js';
import { child, out, percentile, round, startPostgres, table } from './support.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const repo = resolve(here, '..');
const CLI = join(repo, 'dist', 'cli.js');
const RESULTS = join(here, 'results', 'soak.json');
const TOKEN = randomBytes(24).toString('hex');
const RUN_ARGS = { csv: 'city,temp\nOslo,4\nRome,17\nCairo,29\n' };

const numEnv = (name, fallback) => {
  const raw = process.env[name];
  const v = raw === undefined || raw === '' ? fallback : Number(raw);
  if (!Number.isFinite(v) || v <= 0) throw new Error(`${name} must be a positive number (got ${raw})`);
  return v;
};
const MINUTES = numEnv('BENCH_SOAK_MINUTES', 15);
const READERS = numEnv('BENCH_SOAK_READERS', 4);
const RUNNERS = numEnv('BENCH_SOAK_RUNNERS', 1);
const SAMPLE_S = numEnv('BENCH_SOAK_SAMPLE_S', 10);
const STORES = (process.env.BENCH_SOAK_STORES ?? 'sqlite,postgres').split(',').filter(Boolean);
for (const s of STORES)
  if (s !== 'sqlite' && s !== 'postgres') throw new Error(`BENCH_SOAK_STORES: unknown store ${s}`);

const note = (line) => void process.stderr.write(`soak.bench: ${line}\n`);

async function startServer(tmp, name, audit, env) {
  const config = join(tmp, `${name}.yaml`);
  writeFileSync(
    config,
    [
      'approval:',
      '  mode: ask',
      '  rules:',
      '    - { skill: csv-stats, action: allow }',
      '  fallback: rules-only',
      'http:',
      '  session_idle_ms: 60000',
      '',
    ].join('\n'),
  );
  const s = child(
    process.execPath,
    [CLI, '--http', '--port', '0', '--skills', join(repo, 'skills'), '--config', config, '--no-watch'].concat(
      ['--audit', audit],
    ),
    {
      SKILLS_MCP_TOKEN: TOKEN,
      SKILLS_MCP_STATE_KEY_FILE: join(tmp, 'state.key'),
      XDG_STATE_HOME: join(tmp, `state-${name}`),
      ...env,
    },
  );
  for (;;) {
    const m = /over Streamable HTTP at (http:\/\/127\.0\.0\.1:\d+\/mcp)/.exec(s.stderr());
    if (m !== null) return { ...s, name, url: m[1] };
    const code = await Promise.race([s.exited, sleep(50, 'wait')]);
    if (code !== 'wait')
      throw new Error(
        `${name} server exited (${code}) before listening: ${s.stderr().trim().split('\n').at(-1)}`,
      );
  }
}

async function connect(url, era) {
  const client = new Client({ name: 'soak-bench', version: '1.0.0' }, { versionNegotiation: { mode: era } });
  const transport = new StreamableHTTPClientTransport(new URL(url), {
    requestInit: { headers: { authorization: `Bearer ${TOKEN}` } },
  });
  await client.connect(transport);
  return { client, transport };
}

/** Loops `fn(client)` until `until()`; reconnects every `every` calls. Latencies and errors go to `into`. */
async function loop(url, era, every, until, into, fn) {
  while (!until()) {
    let c;
    try {
      c = await connect(url, era);
    } catch (e) {
      into.errors++;
      into.sample ??= String(e);
      await sleep(500);
      continue;
    }
    for (let i = 0; i < every && !until(); i++) {
      const t = performance.now();
      try {
        const r = await fn(c.client);
        if (r.isError === true) {
          into.errors++;
          into.sample ??= (r.content?.find((x) => x.type === 'text')?.text ?? '').split('\n')[0];
        }
      } catch (e) {
        into.errors++;
        into.sample ??= String(e);
      }
      into.latencies.push(performance.now() - t);
    }
    if (era === 'legacy' && Math.random() < 0.5) await c.transport.terminateSession().catch(() => undefined);
    await c.client.close().catch(() => undefined);
  }
}

function countFds(pid) {
  try {
    return readdirSync(`/proc/${pid}/fd`).length;
  } catch {
    return null;
  }
}

function rssMb(pid) {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m === null ? null : round(Number(m[1]) / 1024);
  } catch {
    return null;
  }
}

const fileSize = (p) => {
  try {
    return statSync(p).size;
  } catch {
    return 0;
  }
};

/** The log's bytes on disk and its events, read the way an operator would (read-only, outside the server). */
async function logSize(store) {
  if (store.kind === 'sqlite') {
    const bytes = fileSize(store.path) + fileSize(`${store.path}-wal`);
    let events = null;
    try {
      const db = new Database(store.path, { readonly: true, fileMustExist: true });
      try {
        events = db.prepare('SELECT count(*) AS n FROM events').get().n;
      } finally {
        db.close();
      }
    } catch {
      // The first sample can come before the log exists.
    }
    return { bytes, events };
  }
  const [size] = await store.pg.query('SELECT pg_database_size(current_database()) AS bytes');
  const [count] = await store.pg
    .query('SELECT count(*) AS n FROM skills_mcp.audit_events')
    .catch(() => [{ n: null }]);
  return { bytes: Number(size.bytes), events: count.n === null ? null : Number(count.n) };
}

async function health(url) {
  try {
    const r = await fetch(url.replace(/\/mcp$/, '/healthz'), {
      headers: { authorization: `Bearer ${TOKEN}` },
    });
    const j = await r.json();
    return { sessions: j.sessions ?? null, inFlight: j.inFlight ?? null };
  } catch {
    return { sessions: null, inFlight: null };
  }
}

async function soakOne(tmp, store, endAt) {
  const server = await startServer(tmp, store.kind, store.audit, store.env);
  const until = () => Date.now() >= endAt;
  const readOnly = { latencies: [], errors: 0 };
  const gated = { latencies: [], errors: 0 };
  const sessions = { latencies: [], errors: 0 };
  const samples = [];
  const t0 = Date.now();
  const sampler = (async () => {
    while (!until()) {
      const [h, log] = await Promise.all([health(server.url), logSize(store)]);
      samples.push({
        s: Math.round((Date.now() - t0) / 1000),
        rssMb: rssMb(server.proc.pid),
        fds: countFds(server.proc.pid),
        ...h,
        logBytes: log.bytes,
        events: log.events,
        readOnlyCalls: readOnly.latencies.length,
        gatedCalls: gated.latencies.length,
      });
      await sleep(SAMPLE_S * 1000);
    }
  })();
  const callRead = (c) => c.callTool({ name: 'markdown-toc', arguments: {} });
  await Promise.all([
    ...Array.from({ length: READERS }, () => loop(server.url, 'auto', 200, until, readOnly, callRead)),
    ...Array.from({ length: RUNNERS }, () =>
      loop(server.url, 'auto', 200, until, gated, (c) =>
        c.callTool({ name: 'csv-stats', arguments: RUN_ARGS }),
      ),
    ),
    loop(server.url, 'legacy', 5, until, sessions, callRead),
    sampler,
  ]);
  const last = await Promise.all([health(server.url), logSize(store)]);
  await server.stop();
  const verify = spawnSync(process.execPath, [CLI, 'audit', 'verify', '--audit', store.audit], {
    encoding: 'utf8',
    env: { ...process.env, XDG_STATE_HOME: join(tmp, `state-${store.kind}`), ...store.env },
    timeout: 600_000,
  });
  const stats = (x) => ({
    calls: x.latencies.length,
    errors: x.errors,
    p50: round(percentile(x.latencies, 50)),
    p99: round(percentile(x.latencies, 99)),
    ...(x.sample === undefined ? {} : { sample: x.sample }),
  });
  return {
    store: store.kind,
    readOnly: stats(readOnly),
    gated: stats(gated),
    sessions: stats(sessions),
    samples,
    end: { ...last[0], logBytes: last[1].bytes, events: last[1].events },
    verify: { status: verify.status, summary: (verify.stdout + verify.stderr).trim().split('\n').slice(-3) },
  };
}

function report(r) {
  out(`\n${r.store}: ${MINUTES} min, ${READERS} read-only + ${RUNNERS} gated + 1 session-churn clients`);
  const byMinute = r.samples.filter(
    (s, i) => i === 0 || Math.floor(s.s / 60) > Math.floor(r.samples[i - 1].s / 60),
  );
  table([
    ['t (s)', 'RSS MB', 'fds', 'sessions', 'in flight', 'log MB', 'events', 'read-only', 'gated'],
    ...byMinute.map((s) => [
      s.s,
      s.rssMb,
      s.fds,
      s.sessions,
      s.inFlight,
      round(s.logBytes / 1e6, 2),
      s.events,
      s.readOnlyCalls,
      s.gatedCalls,
    ]),
  ]);
  // Growth over the run, per event: PostgreSQL's database has a fixed size of its own before the first event.
  const first = r.samples[0];
  const grew = r.end.events - (first?.events ?? 0);
  const perEvent = grew > 0 ? round((r.end.logBytes - (first?.logBytes ?? 0)) / grew, 0) : null;
  for (const k of ['readOnly', 'gated', 'sessions']) {
    const x = r[k];
    out(
      `${k}: ${x.calls} calls, ${x.errors} errors, p50 ${x.p50} ms, p99 ${x.p99} ms${x.sample ? ` (${x.sample})` : ''}`,
    );
  }
  const rss = r.samples.map((s) => s.rssMb).filter((x) => x !== null);
  out(
    `RSS first/peak/last ${rss[0]}/${Math.max(...rss)}/${rss.at(-1)} MB; fds first/last ${r.samples[0]?.fds}/${r.samples.at(-1)?.fds}; ` +
      `sessions at the end ${r.end.sessions}; log ${round(r.end.logBytes / 1e6, 2)} MB for ${r.end.events} events (+${perEvent} B per event over the run)`,
  );
  out(`audit verify: exit ${r.verify.status}: ${r.verify.summary.join(' / ')}`);
}

async function main() {
  const tmp = mkdtempSync(join(os.tmpdir(), 'skills-mcp-soak-bench-'));
  chmodSync(tmp, 0o755);
  writeFileSync(join(tmp, 'state.key'), `${randomBytes(32).toString('hex')}\n`, { mode: 0o600 });
  let pgServer;
  const loadBefore = os.loadavg().map((x) => round(x, 2));
  try {
    const stores = [];
    for (const kind of STORES) {
      if (kind === 'sqlite') {
        const path = join(tmp, 'sqlite', 'audit.db');
        mkdirSync(dirname(path), { recursive: true });
        stores.push({ kind, audit: path, path, env: {} });
      } else {
        pgServer = await startPostgres(tmp);
        stores.push({ kind, audit: pgServer.url, env: pgServer.env, pg: pgServer });
      }
    }
    const endAt = Date.now() + MINUTES * 60_000;
    note(`${MINUTES} min with ${STORES.join(' and ')}, side by side`);
    const results = await Promise.all(stores.map((s) => soakOne(tmp, s, endAt)));
    const loadAfter = os.loadavg().map((x) => round(x, 2));
    out(
      `soak: ${MINUTES} min — ${os.cpus().length} cores, node ${process.version}, load average ${loadBefore.join(' ')} before, ${loadAfter.join(' ')} at the end`,
    );
    for (const r of results) report(r);
    const errors = results.reduce((a, r) => a + r.readOnly.errors + r.gated.errors + r.sessions.errors, 0);
    const verified = results.every((r) => r.verify.status === 0);
    out(`\nerrors: ${errors} (target 0); audit verify ok on every log: ${verified}`);
    mkdirSync(dirname(RESULTS), { recursive: true });
    writeFileSync(
      RESULTS,
      `${JSON.stringify({ minutes: MINUTES, readers: READERS, runners: RUNNERS, loadBefore, loadAfter, results, errors, date: new Date().toISOString() }, null, 2)}\n`,
    );
    if (errors > 0 || !verified) process.exitCode = 1;
  } finally {
    pgServer?.stop();
    removeTree(tmp);
  }
}

await main();
