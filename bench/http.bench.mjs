// Streamable HTTP load run on loopback (`npm run bench http`).
//
// Starts the built binary (`node dist/cli.js --http --port 0 --skills skills`), then, once per protocol era
// (legacy sessions, and modern stateless via versionNegotiation 'auto'), connects 50 real
// @modelcontextprotocol/client clients at once and has each make 20 sequential calls of a read-only skill tool
// (the per-skill tool `markdown-toc`). Reports throughput, p50/p95/p99 latency, errors, the server's RSS before and
// after (VmRSS from /proc/<pid>/status), and the legacy sessions still open after the clients end theirs (DELETE).
// The load comes in three passes (a round: both eras): the load run (one round), then two passes of
// BENCH_HTTP_ROUNDS rounds. Within a pass the rounds follow one another, so a server is idle only while the other
// servers take their turn (about a second), far less than the 10 s after which it collects its garbage: the rounds
// after a pass's first measure sustained load, the throughput target. Each pass's first round follows an idle spell
// in which the server did collect its garbage (which also drops V8's optimized code): its figures are reported apart.
// RSS is read with the server idle: "before" once one client per era has made one call (the first call loads the
// code it needs: runner, audit store, HTTP transports), then after each pass; each after IDLE_MS, long enough for
// the server to give back the memory a busy spell left (it collects 10 s and 16 s after going idle). The growth
// over the load run is the memory target; from the second pass to the third (the same load), the leak check.
// Then 10 legacy clients at once each run the executable skill `csv-stats` once through the gated pipeline
// (approval by elicitation, answered "approved" by the client, which holds the token of a second instance started
// for this with SKILLS_MCP_TOKEN: tokenless HTTP does not take a client's own approval; sandboxed run); when no OS
// sandbox works on the machine every call is refused, and the row says "not measured" with the reason. Prints a
// table and writes bench/results/http.json (audit log in a temp folder).
// Each load run is followed by the same run against a bare SDK v2 HTTP server with a trivial tool
// (bench/bare-http-server.mjs), so the two share the machine's noise; the table gives skills-mcp's calls/s as a ratio
// of the bare server's in the same round and era, and each server's CPU time per call (connect, calls, end of session).
// Last, what the answer costs: BENCH_HTTP_REF_ROUNDS rounds per era (after one to warm up) of this server, a bare
// server whose tool returns this server's answer (BARE_ANSWER_FILE) and the trivial bare server, the order rotated
// each round; the ratios of each round's calls/s are reported as medians.
//
// Knobs: BENCH_HTTP_CLIENTS (default 50), BENCH_HTTP_CALLS (calls per client, default 20), BENCH_CLI (another
// build's cli.js), BENCH_HTTP_ROUNDS (rounds of the second and third passes, default 6, at least 2),
// BENCH_HTTP_REF_ROUNDS (rounds per era of the answer's cost, default 6), BENCH_CPU_PROF (a folder for the servers'
// CPU profiles), BENCH_BASELINE_CLI (another build's cli.js, e.g. a copy of dist/ from before a change inside a copy
// of the package: it serves too, and runs right after this build in every round and era, so before and after share
// the noise; its rows and RSS are printed and kept in the JSON).
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import process from 'node:process';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { removeTree } from '../dist/envs/env-store.js';

const here = dirname(fileURLToPath(import.meta.url));
const repo = resolve(here, '..');
const CLI = process.env.BENCH_CLI ? resolve(process.env.BENCH_CLI) : join(repo, 'dist', 'cli.js');
const BASELINE = process.env.BENCH_BASELINE_CLI ? resolve(process.env.BENCH_BASELINE_CLI) : undefined;
const RESULTS = join(here, 'results', 'http.json');
const TOOL = 'markdown-toc';
const RUN_TOOL = 'csv-stats';
const RUN_ARGS = { csv: 'city,temp\nOslo,4\nRome,17\nCairo,29\n' };
const SANDBOXED = 10;

const intEnv = (name, fallback) => {
  const raw = process.env[name];
  const v = raw === undefined || raw === '' ? fallback : Number(raw);
  if (!Number.isInteger(v) || v < 1) throw new Error(`${name} must be a positive integer (got ${raw})`);
  return v;
};
const CLIENTS = intEnv('BENCH_HTTP_CLIENTS', 50);
const CALLS = intEnv('BENCH_HTTP_CALLS', 20);
const ROUNDS = intEnv('BENCH_HTTP_ROUNDS', 6);
const REF_ROUNDS = intEnv('BENCH_HTTP_REF_ROUNDS', 6);
if (ROUNDS < 2)
  throw new Error('BENCH_HTTP_ROUNDS must be at least 2: the first round of a pass follows an idle spell');
const TARGETS = { errors: 0, rssGrowth: 0.2, sessionsAfter: 0, throughputRatio: 0.8 };
const BARE = join(here, 'bare-http-server.mjs');
/** Rounds per pass: the load run, then two passes of sustained load. */
const PASSES = [1, ROUNDS, ROUNDS];
const IDLE_MS = 17_500;

const out = (line = '') => void process.stdout.write(`${line}\n`);
const note = (line) => void process.stderr.write(`http.bench: ${line}\n`);

const sorted = (xs) => [...xs].sort((a, b) => a - b);
/** Nearest-rank percentile. */
const percentile = (xs, p) => {
  const s = sorted(xs);
  return s.length === 0 ? null : s[Math.max(0, Math.ceil((p / 100) * s.length) - 1)];
};
const round2 = (x) => Number(x.toFixed(2));
const median = (xs) => {
  const s = sorted(xs);
  const m = s.length >> 1;
  return s.length === 0 ? null : s.length % 2 === 1 ? s[m] : (s[m - 1] + s[m]) / 2;
};
/** The protocol eras as the client reports them (`getProtocolEra()`). */
const LEGACY = 'legacy';
const MODERN = 'modern';
const round = (x, digits = 2) => (x === null || x === undefined ? null : Number(x.toFixed(digits)));

const rssMiB = (pid) => {
  const m = /^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m === null ? null : Number(m[1]) / 1024;
};

// BENCH_CPU_PROF=<folder>: both servers write a V8 CPU profile there when they exit (node --cpu-prof).
const PROF = process.env.BENCH_CPU_PROF
  ? ['--cpu-prof', `--cpu-prof-dir=${resolve(process.env.BENCH_CPU_PROF)}`]
  : [];

function startServer(args, env = process.env) {
  const proc = spawn(process.execPath, [...PROF, ...args], { stdio: ['ignore', 'ignore', 'pipe'], env });
  let stderr = '';
  proc.stderr.setEncoding('utf8').on('data', (d) => (stderr += d));
  const exited = new Promise((r) => proc.once('exit', (code) => r(code)));
  const url = (async () => {
    for (;;) {
      const m = /over Streamable HTTP at (http:\/\/\S+\/mcp)/.exec(stderr);
      if (m !== null) return m[1];
      const code = await Promise.race([exited, sleep(50, 'wait')]);
      if (code !== 'wait') throw new Error(`server exited (${code}) before listening:\n${stderr}`);
    }
  })();
  return { proc, url, exited, stderr: () => stderr };
}

const health = async (url) => (await fetch(url.replace(/\/mcp$/, '/healthz'))).json();

async function connect(url, era) {
  const client = new Client({ name: 'http-bench', version: '1.0.0' }, { versionNegotiation: { mode: era } });
  const transport = new StreamableHTTPClientTransport(new URL(url));
  await client.connect(transport);
  return { client, transport };
}

/** A client's calls, each timed; a thrown call or an isError result counts as an error. */
async function callMany(client, n, latencies) {
  let errors = 0;
  for (let i = 0; i < n; i++) {
    const t0 = performance.now();
    try {
      const r = await client.callTool({ name: TOOL, arguments: {} });
      if (r.isError === true) errors++;
    } catch {
      errors++;
    }
    latencies.push(performance.now() - t0);
  }
  return errors;
}

async function end({ client, transport }, era) {
  if (era === 'legacy') await transport.terminateSession().catch(() => undefined);
  await client.close();
}

/** CPU time (user + system) a process has used, in ms, from /proc/<pid>/stat; null without /proc. */
const cpuMs = (pid) => {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLOCK_TICKS;
  } catch {
    return null;
  }
};
const CLOCK_TICKS = 100;

/** One load run; `pid` is the server's, for its CPU time per call (robust where wall times are noisy). */
async function loadRun(url, era, pid) {
  const cpu0 = cpuMs(pid);
  const t0 = performance.now();
  const settled = await Promise.allSettled(Array.from({ length: CLIENTS }, () => connect(url, era)));
  const clients = settled.filter((s) => s.status === 'fulfilled').map((s) => s.value);
  const connectErrors = settled.length - clients.length;
  const connectMs = performance.now() - t0;
  const negotiated = clients[0]?.client.getProtocolEra() ?? null;
  const sessionsDuring = (await health(url)).sessions;
  const latencies = [];
  const t1 = performance.now();
  const errs = await Promise.all(clients.map((c) => callMany(c.client, CALLS, latencies)));
  const wallMs = performance.now() - t1;
  await Promise.all(clients.map((c) => end(c, era)));
  const calls = latencies.length;
  return {
    era: negotiated,
    clients: CLIENTS,
    callsPerClient: CALLS,
    calls,
    errors: connectErrors * CALLS + errs.reduce((a, b) => a + b, 0),
    connectErrors,
    connectMs: round(connectMs, 1),
    wallMs: round(wallMs, 1),
    throughput: round((calls / wallMs) * 1000, 1),
    p50: round(percentile(latencies, 50)),
    p95: round(percentile(latencies, 95)),
    p99: round(percentile(latencies, 99)),
    max: round(percentile(latencies, 100)),
    sessionsDuring,
    // Connecting, the calls and ending the sessions, per call.
    serverCpuMsPerCall: cpu0 === null ? null : round((cpuMs(pid) - cpu0) / calls, 3),
    samplesMs: latencies.map((x) => round(x, 3)),
  };
}

/** SANDBOXED legacy clients at once, each running RUN_TOOL once; the client approves when asked. */
async function sandboxedRuns(url, token) {
  const clients = await Promise.all(
    Array.from({ length: SANDBOXED }, async () => {
      const client = new Client(
        { name: 'http-bench', version: '1.0.0' },
        { capabilities: { elicitation: { form: {} } } },
      );
      client.setRequestHandler('elicitation/create', () => ({
        action: 'accept',
        content: { decision: 'approved' },
      }));
      const transport = new StreamableHTTPClientTransport(new URL(url), {
        requestInit: { headers: { authorization: `Bearer ${token}` } },
      });
      await client.connect(transport);
      return { client, transport };
    }),
  );
  const latencies = [];
  const t0 = performance.now();
  const results = await Promise.all(
    clients.map(async ({ client }) => {
      const t = performance.now();
      try {
        const r = await client.callTool({ name: RUN_TOOL, arguments: RUN_ARGS });
        latencies.push(performance.now() - t);
        const text = r.content?.find((c) => c.type === 'text')?.text ?? '';
        return { status: r._meta?.['skills-mcp/status'] ?? (r.isError ? 'error' : 'ok'), text };
      } catch (err) {
        latencies.push(performance.now() - t);
        return { status: 'exception', text: err instanceof Error ? err.message : String(err) };
      }
    }),
  );
  const wallMs = performance.now() - t0;
  await Promise.all(clients.map((c) => end(c, 'legacy')));
  const statuses = Object.fromEntries(
    [...new Set(results.map((r) => r.status))].map((st) => [
      st,
      results.filter((r) => r.status === st).length,
    ]),
  );
  const refused = results.find((r) => r.status === 'sandbox_denied');
  if (results.every((r) => r.status === 'sandbox_denied'))
    return { measured: false, reason: `sandbox unavailable: ${refused.text.split('\n')[0]}`, statuses };
  return {
    measured: true,
    clients: SANDBOXED,
    calls: results.length,
    errors: results.filter((r) => r.status !== 'ok').length,
    statuses,
    wallMs: round(wallMs, 1),
    throughput: round((results.length / wallMs) * 1000, 2),
    p50: round(percentile(latencies, 50)),
    p95: round(percentile(latencies, 95)),
    p99: round(percentile(latencies, 99)),
    max: round(percentile(latencies, 100)),
  };
}

/**
 * Saves the answer of one call of TOOL (legacy era) as JSON; returns its size in bytes. It is the result as the client
 * parsed it, serialized again: the same members and values the server sent, which is what the bare server answers.
 */
async function saveAnswer(url, file) {
  const c = await connect(url, 'legacy');
  const answer = await c.client.callTool({ name: TOOL, arguments: {} });
  await end(c, 'legacy');
  const json = JSON.stringify(answer);
  writeFileSync(file, json);
  return Buffer.byteLength(json);
}

/**
 * Rounds of load runs, per era, of `servers` (this server, a bare one with its answer, the trivial bare one), the
 * order rotated each round (evenly when the rounds are a multiple of 3); the first round warms up. Medians of each
 * round's calls/s ratios; errors are counted in every round, the first too.
 */
async function answerReference(servers) {
  const rounds = { [LEGACY]: [], [MODERN]: [] };
  const errors = { [LEGACY]: 0, [MODERN]: 0 };
  for (let r = 0; r <= REF_ROUNDS; r++) {
    for (const era of ['legacy', 'auto']) {
      const round = { order: [], callsPerSecond: {}, serverCpuMsPerCall: {} };
      const eras = new Set();
      for (let j = 0; j < servers.length; j++) {
        const s = servers[(r + j) % servers.length];
        const run = await loadRun(s.url, era, s.pid);
        round.order.push(s.key);
        round.callsPerSecond[s.key] = run.throughput;
        round.serverCpuMsPerCall[s.key] = run.serverCpuMsPerCall;
        eras.add(run.era);
        if (run.era !== null) errors[run.era] += run.errors;
      }
      const [negotiated] = eras;
      if (eras.size !== 1 || (negotiated !== LEGACY && negotiated !== MODERN))
        throw new Error(
          `answer reference: the servers did not all negotiate one era when asked for "${era}" (got ${[...eras].join(', ')})`,
        );
      if (r > 0) rounds[negotiated].push(round);
    }
  }
  const of = (era) => {
    const m = (f) => median(rounds[era].map((x) => f(x.callsPerSecond)));
    return {
      sameOverBare: m((c) => c.same / c.bare),
      oursOverBare: m((c) => c.ours / c.bare),
      oursOverSame: m((c) => c.ours / c.same),
      errors: errors[era],
      rounds: rounds[era],
    };
  };
  return { [LEGACY]: of(LEGACY), [MODERN]: of(MODERN) };
}

function table(rows) {
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

async function main() {
  const tmp = mkdtempSync(join(os.tmpdir(), 'skills-mcp-http-bench-'));
  // /healthz shows the session count only when asked to.
  writeFileSync(join(tmp, 'bench.yaml'), 'http:\n  health_details: true\n');
  const skillsServer = (cli, audit, env) =>
    startServer(
      [
        cli,
        '--config',
        join(tmp, 'bench.yaml'),
        '--http',
        '--port',
        '0',
        '--skills',
        join(repo, 'skills'),
        '--no-watch',
        '--audit',
        join(tmp, audit),
      ],
      env,
    );
  const server = skillsServer(CLI, 'audit.db');
  // Over HTTP an answer in the client's own approval form counts only from a client holding the server's token, so the
  // sandboxed runs go to an instance of this build started with one (the load runs measure the tokenless server).
  const token = randomBytes(32).toString('hex');
  const gated = skillsServer(CLI, 'gated-audit.db', { ...process.env, SKILLS_MCP_TOKEN: token });
  const base = BASELINE === undefined ? undefined : skillsServer(BASELINE, 'baseline-audit.db');
  const bare = startServer([BARE]);
  let sameAnswer;
  let stopped = false;
  const stop = async () => {
    if (stopped) return;
    stopped = true;
    const procs = [server, bare, gated, ...[base, sameAnswer].filter((p) => p !== undefined)];
    for (const p of procs) p.proc.kill('SIGTERM');
    await Promise.all(procs.map((p) => p.exited));
  };
  try {
    const url = await server.url;
    const bareUrl = await bare.url;
    const baseUrl = base === undefined ? undefined : await base.url;
    const pid = server.proc.pid;
    const rssCold = rssMiB(pid);
    const baseRss = { cold: base === undefined ? null : rssMiB(base.proc.pid), afterPass: [] };
    for (const u of [url, ...(baseUrl === undefined ? [] : [baseUrl])]) {
      for (const era of ['legacy', 'auto']) {
        const c = await connect(u, era);
        await c.client.callTool({ name: TOOL, arguments: {} });
        await end(c, era);
      }
    }
    await sleep(IDLE_MS);
    const rssBefore = rssMiB(pid);
    if (base !== undefined) baseRss.before = rssMiB(base.proc.pid);
    const baseRuns = [];
    // Pass 1 is the load run the memory target is judged on; passes 2 and 3 are sustained load, the same each, so RSS
    // after them tells a leak (steady growth) from the heap and allocator sizing themselves once for this load (a
    // plateau).
    const runs = [];
    const bareRuns = [];
    const rssAfterPass = [];
    for (const [i, rounds] of PASSES.entries()) {
      const pass = i + 1;
      for (let r = 1; r <= rounds; r++) {
        // The first round of a pass follows an idle spell: the server collected its garbage and its compiled code.
        const at = { pass, round: r, afterIdle: r === 1 };
        for (const era of ['legacy', 'auto']) {
          note(
            `pass ${pass}, round ${r}, ${era}: ${CLIENTS} clients × ${CALLS} calls of ${TOOL}, then the bare server`,
          );
          const run = { ...at, ...(await loadRun(url, era, pid)) };
          const old =
            baseUrl === undefined ? undefined : { ...at, ...(await loadRun(baseUrl, era, base.proc.pid)) };
          const floor = { ...at, ...(await loadRun(bareUrl, era, bare.proc.pid)) };
          run.throughputRatio = round2(run.throughput / floor.throughput);
          runs.push(run);
          bareRuns.push(floor);
          if (old !== undefined) {
            old.throughputRatio = round2(old.throughput / floor.throughput);
            baseRuns.push(old);
          }
        }
      }
      await sleep(IDLE_MS);
      rssAfterPass.push(rssMiB(pid));
      if (base !== undefined) baseRss.afterPass.push(rssMiB(base.proc.pid));
    }
    note(`${SANDBOXED} concurrent sandboxed runs of ${RUN_TOOL}`);
    const sandboxed = await sandboxedRuns(await gated.url, token);
    note(`answer reference: ${REF_ROUNDS} rounds per era, this server and two bare ones`);
    const answerFile = join(tmp, 'answer.json');
    const answerBytes = await saveAnswer(url, answerFile);
    sameAnswer = startServer([BARE], { ...process.env, BARE_ANSWER_FILE: answerFile });
    const reference = await answerReference([
      { key: 'ours', url, pid },
      { key: 'same', url: await sameAnswer.url, pid: sameAnswer.proc.pid },
      { key: 'bare', url: bareUrl, pid: bare.proc.pid },
    ]);
    const after = await health(url);
    const growth = (from, to) => (from === null || to === null ? null : to / from - 1);
    const pct = (g) => (g === null ? '?' : `${g >= 0 ? '+' : ''}${round(g * 100, 1)} %`);
    const runGrowth = growth(rssBefore, rssAfterPass[0]);
    const passGrowth = growth(rssAfterPass[1], rssAfterPass[2]);
    // Every load run's errors, the answer reference's too.
    const errors =
      runs.reduce((a, r) => a + r.errors, 0) + reference[LEGACY].errors + reference[MODERN].errors;
    /** Median calls/s ratio of `rs` that are (not) right after an idle spell, per era and over both. */
    const ratiosOf = (rs, afterIdle) => {
      const list = (era) =>
        rs
          .filter((r) => r.afterIdle === afterIdle && (era === undefined || r.era === era))
          .map((r) => r.throughputRatio);
      return {
        legacy: median(list(LEGACY)),
        modern: median(list(MODERN)),
        all: median(list()),
        runs: list(),
      };
    };
    const sustained = ratiosOf(runs, false);
    const afterIdle = ratiosOf(runs, true);

    out(
      `Streamable HTTP on loopback: ${CLIENTS} concurrent clients × ${CALLS} calls of "${TOOL}" (read-only), passes of ${PASSES.join(', ')} rounds`,
    );
    out(
      `machine: ${os.cpus()[0]?.model ?? '?'} × ${os.cpus().length}, ${os.platform()} ${os.release()}, node ${process.version}, load average ${os
        .loadavg()
        .map((x) => x.toFixed(1))
        .join(' ')}`,
    );
    out();
    /** A load run's row, with its calls/s against the bare server's in the same round and era (the bare's: 1). */
    const row = (label, r) => [
      label,
      `${r.pass}.${r.round}${r.afterIdle ? ' (after idle)' : ''}`,
      r.clients,
      r.calls,
      r.errors,
      r.throughput,
      r.p50,
      r.p95,
      r.p99,
      r.max,
      r.sessionsDuring,
      r.serverCpuMsPerCall ?? '-',
      `${(r.throughputRatio ?? 1).toFixed(2)}×`,
    ];
    table([
      [
        'run',
        'pass.round',
        'clients',
        'calls',
        'errors',
        'calls/s',
        'p50 ms',
        'p95 ms',
        'p99 ms',
        'max ms',
        'sessions open',
        'server CPU ms/call',
        'calls/s vs bare',
      ],
      ...runs.flatMap((r, i) => [
        row(`${r.era} era`, r),
        ...(baseRuns[i] === undefined ? [] : [row(`  baseline build, ${baseRuns[i].era} era`, baseRuns[i])]),
        row(`  bare SDK server, ${bareRuns[i].era} era`, bareRuns[i]),
      ]),
      sandboxed.measured
        ? [
            `${SANDBOXED} sandboxed runs (${RUN_TOOL})`,
            '',
            SANDBOXED,
            sandboxed.calls,
            sandboxed.errors,
            sandboxed.throughput,
            sandboxed.p50,
            sandboxed.p95,
            sandboxed.p99,
            sandboxed.max,
            '',
            '',
            '',
          ]
        : [
            `${SANDBOXED} sandboxed runs (${RUN_TOOL})`,
            '',
            'not measured',
            '',
            '',
            '',
            '',
            '',
            '',
            '',
            '',
            '',
            '',
          ],
    ]);
    out();
    out(
      `server RSS (idle): ${round(rssCold, 1)} MiB at start, ${round(rssBefore, 1)} MiB after one call per era, after each pass ${rssAfterPass.map((x) => round(x, 1)).join(', ')} MiB`,
    );
    // Rounds' ratios have two decimals; a median of two of them may have three, shown as such (0.795× is not 0.8×).
    const x = (v) => (v === null ? '?' : `${v.toFixed(Math.round(v * 1000) % 10 === 0 ? 2 : 3)}×`);
    const eras = (m) => `legacy ${x(m.legacy)}, modern ${x(m.modern)}, both ${x(m.all)}`;
    out(
      `calls/s vs bare, the first round of each pass (after an idle spell): ${eras(afterIdle)} (runs: ${afterIdle.runs.map(x).join(', ')})`,
    );
    if (base !== undefined) {
      const b = ratiosOf(baseRuns, false);
      out(
        `baseline build ${BASELINE}: calls/s vs bare under sustained load ${eras(b)} (runs: ${b.runs.map(x).join(', ')}); after an idle spell ${eras(ratiosOf(baseRuns, true))}; idle RSS ${round(baseRss.before, 1)} MiB before, after each pass ${baseRss.afterPass.map((v) => round(v, 1)).join(', ')} MiB`,
      );
    }
    for (const era of [LEGACY, MODERN]) {
      const r = reference[era];
      out(
        `the answer's cost, ${era} era (${REF_ROUNDS} rounds, order rotated): a bare SDK server answering this server's answer (${answerBytes.toLocaleString('en')} bytes of JSON) ${x(r.sameOverBare)} the trivial one; this server ${x(r.oursOverBare)} the trivial one, ${x(r.oursOverSame)} the one with its answer (medians of the rounds' ratios); ${r.errors} errors`,
      );
    }
    out();
    const targets = [
      { target: 'errors = 0', actual: String(errors), met: errors === TARGETS.errors },
      {
        target: `read-only calls/s ≥ ${TARGETS.throughputRatio}× the bare SDK server under sustained load (median of the rounds after each pass's first, in each era)`,
        actual: `${eras(sustained)} (runs: ${sustained.runs.map(x).join(', ')})`,
        met: sustained.legacy >= TARGETS.throughputRatio && sustained.modern >= TARGETS.throughputRatio,
      },
      {
        target: `server RSS before → after the load run (pass 1) ≤ +${TARGETS.rssGrowth * 100} %`,
        actual: `${round(rssBefore, 1)} → ${round(rssAfterPass[0], 1)} MiB (${pct(runGrowth)})`,
        met: runGrowth === null ? null : runGrowth <= TARGETS.rssGrowth,
      },
      {
        target: `server RSS after pass 2 → after pass 3 ≤ +${TARGETS.rssGrowth * 100} % (leak check)`,
        actual: `${round(rssAfterPass[1], 1)} → ${round(rssAfterPass[2], 1)} MiB (${pct(passGrowth)})`,
        met: passGrowth === null ? null : passGrowth <= TARGETS.rssGrowth,
      },
      {
        target: 'sessions cleaned up',
        actual: `${after.sessions} legacy sessions open after the clients ended theirs`,
        met: after.sessions === TARGETS.sessionsAfter,
      },
      sandboxed.measured
        ? {
            target: `${SANDBOXED} concurrent sandboxed runs, errors = 0`,
            actual: `${sandboxed.errors} (${Object.entries(sandboxed.statuses)
              .map(([k, v]) => `${v} ${k}`)
              .join(', ')})`,
            met: sandboxed.errors === 0,
          }
        : {
            target: `${SANDBOXED} concurrent sandboxed runs`,
            actual: `not measured: ${sandboxed.reason}`,
            met: null,
          },
    ];
    const check = (met) => (met === null ? 'n/a' : met ? 'met' : 'NOT MET');
    table([['target', 'actual', 'status'], ...targets.map((t) => [t.target, t.actual, check(t.met)])]);

    const result = {
      bench: 'http',
      date: new Date().toISOString(),
      machine: {
        cpu: os.cpus()[0]?.model ?? null,
        cores: os.cpus().length,
        platform: `${os.platform()} ${os.release()}`,
        node: process.version,
        loadavg: os.loadavg().map((x) => round(x, 2)),
      },
      config: {
        roundsPerPass: PASSES,
        clients: CLIENTS,
        callsPerClient: CALLS,
        tool: TOOL,
        command:
          'node dist/cli.js --config $TMP/bench.yaml --http --port 0 --skills skills --no-watch --audit $TMP/audit.db',
        baseline: 'node bench/bare-http-server.mjs',
      },
      rssMiB: {
        idleMs: IDLE_MS,
        start: round(rssCold, 1),
        beforeRun: round(rssBefore, 1),
        afterPass: rssAfterPass.map((v) => round(v, 1)),
      },
      throughputRatio: { sustained, afterIdle },
      sessionsAfter: after.sessions,
      runs,
      bareRuns,
      ...(base === undefined
        ? {}
        : {
            baseline: {
              cli: BASELINE,
              runs: baseRuns,
              rssMiB: {
                start: round(baseRss.cold, 1),
                beforeRun: round(baseRss.before, 1),
                afterPass: baseRss.afterPass.map((v) => round(v, 1)),
              },
            },
          }),
      sandboxedRuns: sandboxed,
      answerReference: { rounds: REF_ROUNDS, answerBytes, ...reference },
      targets: targets.map((t) => ({ ...t, status: check(t.met) })),
    };
    mkdirSync(dirname(RESULTS), { recursive: true });
    writeFileSync(RESULTS, `${JSON.stringify(result, null, 2)}\n`);
    out();
    out(`raw samples: ${RESULTS}`);
  } finally {
    await stop();
    removeTree(tmp);
  }
  if (/"level":50/.test(server.stderr())) note(`the server logged errors:\n${server.stderr()}`);
}

main().then(
  () => process.exit(0),
  (err) => {
    note(`failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
    process.exit(1);
  },
);
