// A team's load through a real balancer ("npm run bench team"): Debian's HAProxy on loopback in front of the built
// binary (`node dist/cli.js --http`), run as 3 replicas and as 1 replica in the same run, sharing one state key
// file, with approval mode ask and one bearer token (SKILLS_MCP_TOKEN; sign-in with a real issuer is what
// test/team/ exercises).
//
// Per topology:
// - read-only load: 50 real @modelcontextprotocol/client clients at once (2026-07-28 era, round-robin over the
//   replicas), each making 20 sequential calls of the read-only per-skill tool `markdown-toc`: calls/s, p50, p99;
// - approved runs: 20 2025-era clients at once (their sessions stick to one replica), each running `csv-stats` once
//   through the gated pipeline, approved by elicitation, sandboxed: wall time, p50, p99.
// Then audited calls/s: the same read-only load on 3 replicas with each replica's own SQLite audit log, and with
// one PostgreSQL audit log for all three (`--audit postgres://…`, a server this bench starts in a temp folder with
// Debian's postgresql; needs a build whose server writes to PostgreSQL, else the row says why it was not measured).
// Errors are counted everywhere; the target is 0. Prints a table and writes bench/results/team.json.
//
// Knobs: BENCH_TEAM_CLIENTS (default 50), BENCH_TEAM_CALLS (calls per client, default 20), BENCH_TEAM_RUNS
// (approved runs, default 20), BENCH_TEAM_ROUNDS (rounds, default 3: each scenario is reported as the median of
// the rounds, errors summed over all of them).
import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import process from 'node:process';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { removeTree } from '../dist/envs/env-store.js';
import { child, freePort, median, out, percentile, round, startPostgres, table } from './support.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const repo = resolve(here, '..');
const CLI = join(repo, 'dist', 'cli.js');
const RESULTS = join(here, 'results', 'team.json');
const HAPROXY = '/usr/sbin/haproxy';
const TOKEN = randomBytes(24).toString('hex');
const READ_TOOL = 'markdown-toc';
const RUN_TOOL = 'csv-stats';
const RUN_ARGS = { csv: 'city,temp\nOslo,4\nRome,17\nCairo,29\n' };

const intEnv = (name, fallback) => {
  const raw = process.env[name];
  const v = raw === undefined || raw === '' ? fallback : Number(raw);
  if (!Number.isInteger(v) || v < 1) throw new Error(`${name} must be a positive integer (got ${raw})`);
  return v;
};
const CLIENTS = intEnv('BENCH_TEAM_CLIENTS', 50);
const CALLS = intEnv('BENCH_TEAM_CALLS', 20);
const RUNS = intEnv('BENCH_TEAM_RUNS', 20);
const ROUNDS = intEnv('BENCH_TEAM_ROUNDS', 3);

const note = (line) => void process.stderr.write(`team.bench: ${line}\n`);
/** A replica; resolves with its port once it listens, or throws with its stderr if it exits first. */
async function startReplica(ctx, name, audit, env) {
  const r = child(
    process.execPath,
    [
      CLI,
      '--http',
      '--port',
      '0',
      '--skills',
      join(repo, 'skills'),
      '--config',
      ctx.config,
      '--no-watch',
      '--audit',
      audit,
    ],
    {
      SKILLS_MCP_TOKEN: TOKEN,
      SKILLS_MCP_STATE_KEY_FILE: ctx.keyFile,
      XDG_STATE_HOME: join(ctx.tmp, `state-${name}`),
      ...env,
    },
  );
  for (;;) {
    const m = /over Streamable HTTP at http:\/\/127\.0\.0\.1:(\d+)\/mcp/.exec(r.stderr());
    if (m !== null) return { ...r, name, port: Number(m[1]) };
    const code = await Promise.race([r.exited, sleep(50, 'wait')]);
    if (code !== 'wait')
      throw new Error(
        `replica ${name} exited (${code}) before listening: ${r.stderr().trim().split('\n').at(-1)}`,
      );
  }
}

/** HAProxy in the foreground: round-robin, 2025-era sessions sticky on Mcp-Session-Id, /healthz checks. */
async function startHaproxy(ctx, replicas) {
  const port = await freePort();
  const cfg = join(ctx.tmp, `haproxy-${port}.cfg`);
  writeFileSync(
    cfg,
    [
      'global',
      '    maxconn 4096',
      'defaults',
      '    mode http',
      '    timeout connect 5s',
      '    timeout client 120s',
      '    timeout server 120s',
      `frontend mcp`,
      `    bind 127.0.0.1:${port}`,
      '    default_backend replicas',
      'backend replicas',
      '    balance roundrobin',
      '    stick-table type string len 64 size 100k expire 30m',
      '    stick on req.hdr(mcp-session-id)',
      '    stick store-response res.hdr(mcp-session-id)',
      '    option httpchk',
      '    http-check send meth GET uri /healthz hdr Host localhost',
      ...replicas.map((r) => `    server ${r.name} 127.0.0.1:${r.port} check inter 1s`),
      '',
    ].join('\n'),
  );
  const h = child(HAPROXY, ['-db', '-f', cfg]);
  const origin = `http://127.0.0.1:${port}`;
  for (let i = 0; ; i++) {
    const up = await fetch(`${origin}/healthz`).then(
      (r) => r.ok,
      () => false,
    );
    if (up) break;
    if (h.proc.exitCode !== null || i > 200) {
      await h.stop();
      throw new Error(`haproxy did not start: ${h.stderr()}`);
    }
    await sleep(50);
  }
  return { ...h, url: `${origin}/mcp` };
}

async function connect(url, era, approve = false) {
  const client = new Client(
    { name: 'team-bench', version: '1.0.0' },
    { capabilities: approve ? { elicitation: { form: {} } } : {}, versionNegotiation: { mode: era } },
  );
  if (approve)
    client.setRequestHandler('elicitation/create', () => ({
      action: 'accept',
      content: { decision: 'approved' },
    }));
  const transport = new StreamableHTTPClientTransport(new URL(url), {
    requestInit: { headers: { authorization: `Bearer ${TOKEN}` } },
  });
  await client.connect(transport);
  return { client, transport, era };
}

async function end({ client, transport, era }) {
  if (era === 'legacy') await transport.terminateSession().catch(() => undefined);
  await client.close().catch(() => undefined);
}

const summary = (latencies, wallMs, errors, extra = {}) => ({
  calls: latencies.length,
  errors,
  wallMs: round(wallMs),
  throughput: round((latencies.length / wallMs) * 1000),
  p50: round(percentile(latencies, 50)),
  p99: round(percentile(latencies, 99)),
  ...extra,
});

/** CLIENTS modern-era clients at once, CALLS sequential read-only calls each. */
async function readOnlyLoad(url) {
  const settled = await Promise.allSettled(Array.from({ length: CLIENTS }, () => connect(url, 'auto')));
  const clients = settled.filter((s) => s.status === 'fulfilled').map((s) => s.value);
  let errors = (settled.length - clients.length) * CALLS;
  const latencies = [];
  const t0 = performance.now();
  await Promise.all(
    clients.map(async ({ client }) => {
      for (let i = 0; i < CALLS; i++) {
        const t = performance.now();
        try {
          if ((await client.callTool({ name: READ_TOOL, arguments: {} })).isError === true) errors++;
        } catch {
          errors++;
        }
        latencies.push(performance.now() - t);
      }
    }),
  );
  const wallMs = performance.now() - t0;
  await Promise.all(clients.map(end));
  return summary(latencies, wallMs, errors);
}

/** RUNS 2025-era clients at once, each running RUN_TOOL once, approved by elicitation. */
async function approvedRuns(url) {
  const clients = await Promise.all(Array.from({ length: RUNS }, () => connect(url, 'legacy', true)));
  const latencies = [];
  const statuses = {};
  let sample = '';
  const t0 = performance.now();
  await Promise.all(
    clients.map(async ({ client }) => {
      const t = performance.now();
      let status;
      try {
        const r = await client.callTool({ name: RUN_TOOL, arguments: RUN_ARGS });
        status = r._meta?.['skills-mcp/status'] ?? (r.isError ? 'error' : 'ok');
        if (status !== 'ok') sample = (r.content?.find((c) => c.type === 'text')?.text ?? '').split('\n')[0];
      } catch (err) {
        status = 'exception';
        sample = String(err);
      }
      latencies.push(performance.now() - t);
      statuses[status] = (statuses[status] ?? 0) + 1;
    }),
  );
  const wallMs = performance.now() - t0;
  await Promise.all(clients.map(end));
  if (statuses.sandbox_denied === RUNS)
    return { measured: false, reason: `sandbox unavailable: ${sample}`, statuses };
  return summary(latencies, wallMs, RUNS - (statuses.ok ?? 0), {
    measured: true,
    statuses,
    ...(sample ? { sample } : {}),
  });
}

/** N replicas (each its own audit unless `audit` is given) behind HAProxy; `fn` runs against the balancer. */
async function withStack(ctx, n, opts, fn) {
  const names = Array.from({ length: n }, (_, i) => `r${i + 1}`);
  const started = await Promise.allSettled(
    names.map((name) =>
      startReplica(ctx, name, opts.audit ?? join(ctx.tmp, `${opts.label}-${name}`, 'audit.db'), opts.env),
    ),
  );
  const replicas = started.filter((s) => s.status === 'fulfilled').map((s) => s.value);
  try {
    const failed = started.find((s) => s.status === 'rejected');
    if (failed) throw failed.reason;
    const lb = await startHaproxy(ctx, replicas);
    try {
      return await fn(lb.url);
    } finally {
      await lb.stop();
    }
  } finally {
    await Promise.all(replicas.map((r) => r.stop()));
  }
}

/** One round: each topology's read-only load and approved runs, then the audited load with SQLite and PostgreSQL. */
async function oneRound(ctx, pgServer) {
  const r = { topologies: {}, audited: {} };
  for (const n of [3, 1]) {
    note(`${n} replica(s): read-only load, then approved runs`);
    r.topologies[n] = await withStack(ctx, n, { label: `top${n}` }, async (url) => ({
      readOnly: await readOnlyLoad(url),
      approved: await approvedRuns(url),
    }));
  }
  note('audited calls: 3 replicas, SQLite each');
  r.audited.sqlite = { measured: true, ...(await withStack(ctx, 3, { label: 'sqlite' }, readOnlyLoad)) };
  note('audited calls: 3 replicas, one PostgreSQL log');
  r.audited.postgres =
    pgServer.url === undefined
      ? { measured: false, reason: pgServer.reason }
      : {
          measured: true,
          ...(await withStack(ctx, 3, { label: 'pg', audit: pgServer.url, env: pgServer.env }, readOnlyLoad)),
        };
  return r;
}

/** One scenario over all rounds: errors summed, calls/s and latencies as medians of the rounds. */
const across = (samples) => {
  if (samples.some((x) => x.measured === false)) return samples.find((x) => x.measured === false);
  return {
    calls: samples.reduce((a, x) => a + x.calls, 0),
    errors: samples.reduce((a, x) => a + x.errors, 0),
    throughput: round(median(samples.map((x) => x.throughput))),
    p50: round(median(samples.map((x) => x.p50))),
    p99: round(median(samples.map((x) => x.p99))),
  };
};

async function main() {
  if (!existsSync(HAPROXY)) throw new Error(`${HAPROXY} is missing: run \`node scripts/setup.mjs test\``);
  const tmp = mkdtempSync(join(os.tmpdir(), 'skills-mcp-team-bench-'));
  chmodSync(tmp, 0o755);
  const ctx = { tmp, config: join(tmp, 'bench.yaml'), keyFile: join(tmp, 'state.key') };
  writeFileSync(ctx.config, 'approval:\n  mode: ask\n');
  writeFileSync(ctx.keyFile, `${randomBytes(32).toString('hex')}\n`, { mode: 0o600 });
  const rounds = [];
  let pgServer = {};
  try {
    try {
      pgServer = await startPostgres(ctx.tmp);
    } catch (e) {
      pgServer = { reason: String(e instanceof Error ? e.message : e).split('\n')[0] };
    }
    for (let i = 0; i < ROUNDS; i++) {
      note(`round ${i + 1} of ${ROUNDS}`);
      rounds.push(await oneRound(ctx, pgServer));
    }
  } finally {
    pgServer.stop?.();
    removeTree(tmp);
  }

  const pick = (f) => across(rounds.map(f));
  const result = {
    clients: CLIENTS,
    callsPerClient: CALLS,
    approvedRuns: RUNS,
    rounds: ROUNDS,
    loadAverage: os.loadavg().map((x) => round(x, 2)),
    topologies: Object.fromEntries(
      [3, 1].map((n) => [
        n,
        { readOnly: pick((r) => r.topologies[n].readOnly), approved: pick((r) => r.topologies[n].approved) },
      ]),
    ),
    audited: { sqlite: pick((r) => r.audited.sqlite), postgres: pick((r) => r.audited.postgres) },
    raw: rounds,
  };
  const notes = [];
  const row = (label, r) => {
    if (r.measured !== false) return [label, r.calls, r.errors, r.throughput, r.p50, r.p99];
    notes.push(`${label}: not measured: ${r.reason}`);
    return [label, 'not measured', '', '', '', ''];
  };
  out(
    `team through HAProxy: ${CLIENTS} clients × ${CALLS} read-only calls; ${RUNS} concurrent approved runs; ` +
      `medians of ${ROUNDS} round(s) — ${os.cpus().length} cores, node ${process.version}, ` +
      `load average ${result.loadAverage.join(' ')}`,
  );
  table([
    ['scenario', 'calls', 'errors', 'calls/s', 'p50 ms', 'p99 ms'],
    row('read-only, 3 replicas', result.topologies[3].readOnly),
    row('read-only, 1 replica', result.topologies[1].readOnly),
    row('approved runs, 3 replicas', result.topologies[3].approved),
    row('approved runs, 1 replica', result.topologies[1].approved),
    row('audited, 3 replicas, SQLite each', result.audited.sqlite),
    row('audited, 3 replicas, PostgreSQL', result.audited.postgres),
  ]);
  for (const line of notes) out(line);
  const ratioOf = (f) => round(median(rounds.map((r) => f(r)).filter((x) => Number.isFinite(x))), 2);
  result.ratios = {
    replicas3vs1: ratioOf((r) => r.topologies[3].readOnly.throughput / r.topologies[1].readOnly.throughput),
    postgresVsSqlite: ratioOf((r) => r.audited.postgres.throughput / r.audited.sqlite.throughput),
  };
  out(`3 replicas vs 1: ${result.ratios.replicas3vs1}× read-only calls/s (median of the rounds' ratios)`);
  if (result.ratios.postgresVsSqlite !== null)
    out(
      `PostgreSQL vs SQLite: ${result.ratios.postgresVsSqlite}× audited calls/s (median of the rounds' ratios)`,
    );
  const errors = rounds
    .flatMap((r) =>
      [r.topologies[3], r.topologies[1]].flatMap((t) => [t.readOnly.errors, t.approved.errors ?? 0]),
    )
    .concat(rounds.flatMap((r) => [r.audited.sqlite.errors, r.audited.postgres.errors ?? 0]))
    .reduce((a, b) => a + b, 0);
  out(`errors: ${errors} (target 0)`);
  mkdirSync(dirname(RESULTS), { recursive: true });
  writeFileSync(
    RESULTS,
    `${JSON.stringify({ ...result, errors, date: new Date().toISOString() }, null, 2)}\n`,
  );
  if (errors > 0) process.exitCode = 1;
}

await main();
