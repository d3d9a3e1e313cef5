// Start-up and warm-call benchmark ("npm run bench startup").
//
// Measures, with the real @modelcontextprotocol/client over stdio (legacy era, as most hosts speak today):
//   - spawn → initialize → tools/list wall time of `node dist/cli.js --no-watch` serving 10, 100, 1,000 and 10,000
//     generated skills, and of the server as it starts by default (watching its skills for hot reload) at 1,000 and
//     10,000, interleaved round-robin with a bare SDK v2 server that registers 100 trivial tools
//     (bench/bare-server.mjs) and with `node -e 0` spawn → exit (the floor), so machine noise hits every
//     configuration alike;
//   - the server's peak RSS (VmHWM from /proc/<pid>/status, read after tools/list, before the client closes) and the
//     CPU time it used up to then (/proc/<pid>/stat), the steadier figure when other jobs share the machine; for the
//     watching rows also both once the server has gone quiet (its CPU time still for 300 ms): setting up the
//     watches happens after the first answers;
//   - warm per-call latency of a per-skill tool (10 skills) next to the bare server's trivial tool, and next to the
//     same bare server with every tool returning that skill tool's answer (what an answer that size costs by itself).
// With BENCH_BASELINE_CLI (another build's cli.js, e.g. a copy of dist/ from before a change, inside a copy of the
// package so it finds its package.json) that build runs in the same rounds, so before and after share the noise.
// Prints a table with the targets and writes bench/results/startup.json with every raw sample.
//
// Needs a built dist/ (`npm run bench` builds first). Knobs: BENCH_RUNS (start-up runs per configuration, ≥ 10,
// default 15), BENCH_CALLS (measured warm calls, ≥ 100, default 200), BENCH_WARMUP_CALLS (calls per server before
// those, ≥ 20, default 1,000; the first 1,000 of them are reported too), BENCH_TOOLS (passed as --tools, default: the
// server's default, auto), BENCH_WATCH_SIZES (sizes also run watching, default the sizes of 1,000 and more; empty
// for none), BENCH_KEEP=1 keeps the generated skills folder, BENCH_CLI runs another build's cli.js (e.g. a snapshot
// of dist/ while others rebuild it).
import { Buffer } from 'node:buffer';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import process from 'node:process';
import { clearTimeout, setTimeout } from 'node:timers';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport, getDefaultEnvironment } from '@modelcontextprotocol/client/stdio';
import { generateSkills } from './generate-skills.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const repo = resolve(here, '..');
const CLI = process.env.BENCH_CLI ? resolve(process.env.BENCH_CLI) : join(repo, 'dist', 'cli.js');
const BASELINE = process.env.BENCH_BASELINE_CLI ? resolve(process.env.BENCH_BASELINE_CLI) : undefined;
const BARE = join(here, 'bare-server.mjs');
const RESULTS = join(here, 'results', 'startup.json');

const intEnv = (name, fallback, min) => {
  const raw = process.env[name];
  const v = raw === undefined || raw === '' ? fallback : Number(raw);
  if (!Number.isInteger(v) || v < min) throw new Error(`${name} must be an integer ≥ ${min} (got ${raw})`);
  return v;
};
const RUNS = intEnv('BENCH_RUNS', 15, 10);
const CALLS = intEnv('BENCH_CALLS', 200, 100);
/**
 * Calls per server before the measured ones. V8 optimizes a function only after many calls, and a server with more
 * code on its call path takes longer to get there: the first calls after a start are reported on their own row.
 */
const WARMUP_CALLS = intEnv('BENCH_WARMUP_CALLS', 1000, 20);
/** The first this many calls after tools/list (part of the warm-up) make the "first calls" rows. */
const FIRST_CALLS = Math.min(WARMUP_CALLS, 1000);
const SIZES = (process.env.BENCH_SIZES ?? '10,100,1000,10000').split(',').map(Number);
const WATCH_SIZES =
  process.env.BENCH_WATCH_SIZES === undefined
    ? SIZES.filter((n) => n >= 1000)
    : process.env.BENCH_WATCH_SIZES.split(',')
        .filter((x) => x !== '')
        .map(Number);
for (const n of WATCH_SIZES)
  if (!SIZES.includes(n)) throw new Error(`BENCH_WATCH_SIZES: ${n} is not one of BENCH_SIZES`);
/** How long a watching server's CPU time must stay still to count as settled, and the most a run waits for it. */
const QUIET_MS = 300;
const SETTLE_TIMEOUT_MS = 5_000;
const TOOLS_MODE = process.env.BENCH_TOOLS || undefined;
const START_TIMEOUT_MS = 120_000;
const CALL_TIMEOUT_MS = 30_000;

const TARGETS = {
  ratio10: 0.7,
  ratio100: 0.7,
  ratio1000: 1.0,
  ratio10000: 2.0,
  rss10000MiB: 150,
  warmCallRatio: 1.2,
};

// USER_HZ, which Linux fixes at 100 for /proc/<pid>/stat whatever the kernel's own tick rate.
const CLOCK_TICKS = 100;

const out = (line = '') => void process.stdout.write(`${line}\n`);
const note = (line) => void process.stderr.write(`startup.bench: ${line}\n`);

// ---------------------------------------------------------------------------------------------------------------
// Statistics

const sorted = (xs) => [...xs].sort((a, b) => a - b);
const median = (xs) => {
  const s = sorted(xs);
  const m = s.length >> 1;
  return s.length % 2 === 1 ? s[m] : (s[m - 1] + s[m]) / 2;
};
/** Nearest-rank percentile (p95 of 15 samples is the largest; of 200, the 190th). */
const percentile = (xs, p) => {
  const s = sorted(xs);
  return s[Math.max(0, Math.ceil((p / 100) * s.length) - 1)];
};
const round = (x, digits = 2) => (x === undefined || x === null ? null : Number(x.toFixed(digits)));

// ---------------------------------------------------------------------------------------------------------------
// Processes and clients

const live = new Set(); // clients not closed yet, for cleanup on failure or Ctrl+C
let tmpRoot;

function withTimeout(promise, ms, what) {
  let timer;
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} timed out after ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/** VmHWM (peak resident set) of a live process in KiB, or null when /proc is not available. */
function peakRssKiB(pid) {
  if (pid === null || pid === undefined) return null;
  try {
    const m = /^VmHWM:\s+(\d+)\s+kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) : null;
  } catch {
    return null;
  }
}

/**
 * CPU time (user + system, all threads) a live process has used, in ms, or null without /proc. Clock ticks of 10 ms:
 * one sample is coarse, the median of a run is not, and unlike wall time it hardly moves when other jobs share the
 * machine, which makes it the steadier way to compare two builds.
 */
function cpuMs(pid) {
  if (pid === null || pid === undefined) return null;
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLOCK_TICKS;
  } catch {
    return null;
  }
}

/** Spawns a server and connects a legacy-era client; the clock starts before the spawn. */
async function connect(cfg) {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: cfg.args,
    cwd: cfg.cwd,
    // The server audits read-only calls: keep the bench's records out of the user's real audit log.
    env: {
      ...getDefaultEnvironment(),
      SKILLS_MCP_AUDIT: join(tmpRoot ?? os.tmpdir(), 'audit', 'audit.db'),
      ...cfg.env,
    },
    stderr: 'pipe',
  });
  const stderr = [];
  transport.stderr?.on('data', (chunk) => stderr.push(chunk));
  const client = new Client(
    { name: 'startup-bench', version: '1.0.0' },
    { capabilities: {}, versionNegotiation: { mode: 'legacy' } },
  );
  const errors = [];
  client.onerror = (err) => errors.push(err instanceof Error ? err.message : String(err));
  const session = {
    client,
    transport,
    errors,
    stderr: () => Buffer.concat(stderr).toString('utf8'),
    close: async () => {
      live.delete(session);
      const t = performance.now();
      await client.close();
      return performance.now() - t;
    },
  };
  live.add(session);
  const t0 = performance.now();
  try {
    await withTimeout(client.connect(transport), START_TIMEOUT_MS, `${cfg.label}: initialize`);
  } catch (err) {
    await session.close().catch(() => {});
    throw annotate(err, session);
  }
  return { session, t0 };
}

function annotate(err, session) {
  const e = err instanceof Error ? err : new Error(String(err));
  const tail = session.stderr().trim().split('\n').slice(-20).join('\n');
  if (tail !== '') e.message += `\n--- server stderr (tail) ---\n${tail}`;
  return e;
}

/** CPU time and peak RSS once the process has used no CPU for QUIET_MS (null when it never goes quiet). */
async function settled(pid) {
  const until = performance.now() + SETTLE_TIMEOUT_MS;
  let last = cpuMs(pid);
  let since = performance.now();
  while (performance.now() < until) {
    await new Promise((r) => setTimeout(r, 50));
    const now = cpuMs(pid);
    if (now !== last) {
      last = now;
      since = performance.now();
    } else if (performance.now() - since >= QUIET_MS) return { cpuMs: now, rssKiB: peakRssKiB(pid) };
  }
  return { cpuMs: null, rssKiB: null };
}

/** One start-up sample: spawn → initialize → tools/list, then peak RSS, then close. */
async function measureStart(cfg) {
  const { session, t0 } = await connect(cfg);
  try {
    const list = await withTimeout(session.client.listTools(), START_TIMEOUT_MS, `${cfg.label}: tools/list`);
    const ms = performance.now() - t0;
    const rssKiB = peakRssKiB(session.transport.pid);
    const cpu = cpuMs(session.transport.pid);
    const quiet = cfg.watch ? await settled(session.transport.pid) : { cpuMs: null, rssKiB: null };
    if (list.tools.length !== cfg.expectTools) {
      throw new Error(
        `${cfg.label}: tools/list returned ${list.tools.length} tools, expected ${cfg.expectTools}`,
      );
    }
    if (session.errors.length > 0)
      throw new Error(`${cfg.label}: client errors: ${session.errors.join('; ')}`);
    const closeMs = await session.close();
    return {
      ms,
      cpuMs: cpu,
      rssKiB,
      settledCpuMs: quiet.cpuMs,
      settledRssKiB: quiet.rssKiB,
      closeMs,
      paged: list.nextCursor !== undefined,
    };
  } catch (err) {
    await session.close().catch(() => {});
    throw annotate(err, session);
  }
}

/** `node -e 0` spawn → exit, with the same environment the client transport gives servers. */
function measureFloor() {
  return new Promise((resolvePromise, reject) => {
    const t0 = performance.now();
    const child = spawn(process.execPath, ['-e', '0'], { stdio: 'ignore', env: getDefaultEnvironment() });
    child.once('error', reject);
    child.once('exit', (code) => {
      const ms = performance.now() - t0;
      if (code === 0) resolvePromise({ ms, cpuMs: null, rssKiB: null, closeMs: 0 });
      else reject(new Error(`node -e 0 exited with ${code}`));
    });
  });
}

async function listAll(client, method) {
  const items = [];
  let cursor;
  do {
    const page =
      method === 'tools'
        ? await client.listTools(cursor === undefined ? {} : { cursor })
        : await client.listPrompts(cursor === undefined ? {} : { cursor });
    items.push(...(method === 'tools' ? page.tools : page.prompts));
    cursor = page.nextCursor;
  } while (cursor !== undefined);
  return items;
}

/** Untimed check (also the warm-up of the page cache): the server serves what it should and logs no warnings. */
async function verify(cfg) {
  const { session } = await connect(cfg);
  try {
    const tools = await listAll(session.client, 'tools');
    const info = { tools: tools.length, toolNames: tools.slice(0, 5).map((t) => t.name) };
    if (cfg.skills !== undefined) {
      const prompts = await listAll(session.client, 'prompts');
      info.prompts = prompts.length;
      if (prompts.length !== cfg.skills) {
        throw new Error(`${cfg.label}: ${prompts.length} prompts, expected one per skill (${cfg.skills})`);
      }
    }
    // Let late log lines arrive before reading stderr.
    await new Promise((r) => setTimeout(r, 50));
    info.stderr = session.stderr();
    await session.close();
    return info;
  } catch (err) {
    await session.close().catch(() => {});
    throw annotate(err, session);
  }
}

/**
 * Warm per-call latency: every server connected, calls rotate between them after a warm-up. With `reference`, the
 * answer of `reference.of`'s tool is saved to the file `reference.cfg` serves (its `BARE_ANSWER_FILE`) and that bare
 * server joins the rotation: what an answer that size costs a bare server and the client.
 */
async function measureWarmCalls(cfgs, reference) {
  const servers = [];
  const isBare = (cfg) => cfg.id === 'bare' || cfg.id === reference?.cfg.id;
  try {
    for (const cfg of cfgs) servers.push({ cfg, ...(await connect(cfg)), ms: [], first: [] });
    const toolOf = async (s) => {
      const tools = (await s.session.client.listTools()).tools;
      s.tool = isBare(s.cfg)
        ? tools[0].name
        : tools.find(
            (t) =>
              t.annotations?.readOnlyHint === true &&
              !['read_skill_file', 'list_skills', 'load_skill'].includes(t.name),
          )?.name;
      if (s.tool === undefined) throw new Error(`${s.cfg.label}: no per-skill tool in tools/list`);
    };
    for (const s of servers) await toolOf(s);
    let answerBytes = null;
    if (reference !== undefined) {
      const of = servers.find((s) => s.cfg.id === reference.of);
      const answer = JSON.stringify(await of.session.client.callTool({ name: of.tool, arguments: {} }));
      writeFileSync(reference.cfg.env.BARE_ANSWER_FILE, answer);
      answerBytes = Buffer.byteLength(answer);
      const s = { cfg: reference.cfg, ...(await connect(reference.cfg)), ms: [], first: [] };
      servers.push(s);
      await toolOf(s);
      const echoed = JSON.stringify(await s.session.client.callTool({ name: s.tool, arguments: {} }));
      if (echoed !== answer) throw new Error(`${reference.cfg.label}: its answer differs from the saved one`);
    }
    const call = async (s) => {
      const t = performance.now();
      const res = await withTimeout(
        s.session.client.callTool({ name: s.tool, arguments: {} }),
        CALL_TIMEOUT_MS,
        `tools/call ${s.tool}`,
      );
      const ms = performance.now() - t;
      if (res.isError)
        throw new Error(`tools/call ${s.tool} returned an error: ${JSON.stringify(res.content)}`);
      return ms;
    };
    for (let i = 0; i < WARMUP_CALLS; i++) {
      for (let k = 0; k < servers.length; k++) {
        const s = servers[(i + k) % servers.length];
        const ms = await call(s);
        if (i < FIRST_CALLS) s.first.push(ms);
      }
    }
    for (let i = 0; i < CALLS; i++) {
      // Rotate which goes first so none always follows another's GC or wake-up.
      for (let k = 0; k < servers.length; k++) {
        const s = servers[(i + k) % servers.length];
        s.ms.push(await call(s));
      }
    }
    return {
      answerBytes,
      byId: Object.fromEntries(servers.map((s) => [s.cfg.id, { tool: s.tool, ms: s.ms, first: s.first }])),
    };
  } finally {
    for (const s of servers) await s.session.close().catch(() => {});
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Output

function table(rows) {
  const widths = rows[0].map((_, c) => Math.max(...rows.map((r) => String(r[c]).length)));
  return rows.map((r, i) => {
    const line = r
      .map((cell, c) => (c === 0 ? String(cell).padEnd(widths[c]) : String(cell).padStart(widths[c])))
      .join('  ');
    return i === 0 ? `${line}\n${widths.map((w) => '-'.repeat(w)).join('  ')}` : line;
  });
}

const fmt = (x, digits = 1) => (x === null || x === undefined ? '-' : x.toFixed(digits));

function machineInfo() {
  const cpus = os.cpus();
  let commit = null;
  let dirty = null;
  try {
    const rev = spawnSync('git', ['rev-parse', 'HEAD'], { cwd: repo, encoding: 'utf8' });
    if (rev.status === 0) commit = rev.stdout.trim();
    const st = spawnSync('git', ['status', '--porcelain'], { cwd: repo, encoding: 'utf8' });
    if (st.status === 0) dirty = st.stdout.trim() !== '';
  } catch {
    // git is optional
  }
  return {
    cpu: cpus[0]?.model ?? 'unknown',
    cores: cpus.length,
    totalMemMiB: Math.round(os.totalmem() / 1048576),
    node: process.version,
    kernel: `${os.type()} ${os.release()}`,
    platform: `${process.platform}-${process.arch}`,
    loadavgAtStart: os.loadavg().map((x) => round(x)),
    git: { commit, dirty },
  };
}

// ---------------------------------------------------------------------------------------------------------------
// Main

async function main() {
  if (!existsSync(CLI))
    throw new Error(`${CLI} is missing: run \`npm run build\` first (npm run bench does).`);
  const machine = machineInfo();
  const started = new Date();
  tmpRoot = mkdtempSync(join(os.tmpdir(), 'skills-mcp-bench-'));

  note(`generating ${SIZES.join(', ')} skills in ${tmpRoot}`);
  const generated = {};
  for (const n of SIZES) {
    const dir = join(tmpRoot, `skills-${n}`);
    mkdirSync(dir);
    generated[n] = { dir, bytes: generateSkills(dir, n, 0x5eed + n) };
  }

  const toolsArgs = TOOLS_MODE === undefined ? [] : ['--tools', TOOLS_MODE];
  const skillsCfg = (n, cli = CLI, tag = '', watch = false) => ({
    id: `skills-${n}${watch ? '-watch' : ''}${tag === '' ? '' : `-${tag}`}`,
    label: `skills-mcp${tag === '' ? '' : ` (${tag})`}, ${n} skills${watch ? ', watching' : ''}`,
    skills: n,
    watch,
    args: [
      cli,
      '--skills',
      generated[n].dir,
      ...(watch ? [] : ['--no-watch']),
      '--log-level',
      'warn',
      ...toolsArgs,
    ],
    cwd: tmpRoot, // no stray ./skills-mcp.yaml
    expectTools: undefined,
  });
  const bareCfg = {
    id: 'bare',
    label: 'bare SDK v2 server, 100 tools',
    args: [BARE],
    cwd: tmpRoot,
    expectTools: 100,
  };
  const floorCfg = { id: 'floor', label: 'node -e 0 (spawn → exit)', floor: true };
  // Each size with this build, then (BENCH_BASELINE_CLI) with the baseline build right after it.
  const skillCfgs = SIZES.flatMap((n) => [
    ...(BASELINE === undefined ? [skillsCfg(n)] : [skillsCfg(n), skillsCfg(n, BASELINE, 'baseline')]),
    ...(!WATCH_SIZES.includes(n)
      ? []
      : BASELINE === undefined
        ? [skillsCfg(n, CLI, '', true)]
        : [skillsCfg(n, CLI, '', true), skillsCfg(n, BASELINE, 'baseline', true)]),
  ]);

  // Verify each server once (untimed; also warms the page cache) and learn the tool count tools/list must return.
  note('verifying servers');
  const verified = {};
  for (const cfg of [bareCfg, ...skillCfgs]) {
    const info = await verify(cfg);
    verified[cfg.id] = info;
    if (cfg.expectTools === undefined) cfg.expectTools = info.tools;
    if (cfg.id === 'bare' && info.tools !== 100)
      throw new Error(`bare server lists ${info.tools} tools, not 100`);
    if (info.stderr.trim() !== '') {
      note(
        `${cfg.label} wrote to stderr at --log-level warn:\n${info.stderr.trim().split('\n').slice(0, 5).join('\n')}`,
      );
    }
  }

  // Start-up: one discarded round, then RUNS interleaved rounds (floor, bare, 10, 100, 1000, floor, bare, …).
  const order = [floorCfg, bareCfg, ...skillCfgs];
  const samples = Object.fromEntries(order.map((c) => [c.id, []]));
  const once = (cfg) => (cfg.floor ? measureFloor() : measureStart(cfg));
  note(`start-up: 1 warm-up round + ${RUNS} rounds of ${order.map((c) => c.id).join(', ')}`);
  for (const cfg of order) await once(cfg);
  for (let round = 0; round < RUNS; round++) {
    for (const cfg of order) samples[cfg.id].push(await once(cfg));
    process.stderr.write(`  round ${round + 1}/${RUNS}\r`);
  }
  process.stderr.write('\n');

  // A per-skill tool is served only up to 30 skills (the server's auto mode): without such a size, no warm calls.
  const warmSize = SIZES.find((n) => n <= 30);
  const warmCfgs =
    warmSize === undefined
      ? []
      : [
          bareCfg,
          skillsCfg(warmSize),
          ...(BASELINE === undefined ? [] : [skillsCfg(warmSize, BASELINE, 'baseline')]),
        ];
  if (warmSize === undefined) note('warm calls: skipped (no size of at most 30 skills in BENCH_SIZES)');
  else
    note(
      `warm calls: ${WARMUP_CALLS} warm-up (the first ${FIRST_CALLS} reported) + ${CALLS} measured per server, alternating`,
    );
  // What the answer's size costs by itself: a bare server whose tools return this server's answer.
  const answerCfg = {
    id: 'bare-answer',
    label: "bare SDK v2 server answering skills-mcp's answer",
    args: [BARE],
    cwd: tmpRoot,
    env: { BARE_ANSWER_FILE: join(tmpRoot, 'answer.json') },
  };
  const reference = warmSize === undefined ? undefined : { of: `skills-${warmSize}`, cfg: answerCfg };
  const measured =
    warmSize === undefined ? { answerBytes: null, byId: {} } : await measureWarmCalls(warmCfgs, reference);
  const warm = measured.byId;

  // Summaries.
  const summary = {};
  for (const cfg of order) {
    const ms = samples[cfg.id].map((s) => s.ms);
    const rss = samples[cfg.id].map((s) => s.rssKiB).filter((x) => x !== null);
    const cpu = samples[cfg.id].map((s) => s.cpuMs).filter((x) => x !== null);
    const settledCpu = samples[cfg.id].map((s) => s.settledCpuMs).filter((x) => x != null);
    const settledRss = samples[cfg.id].map((s) => s.settledRssKiB).filter((x) => x != null);
    summary[cfg.id] = {
      label: cfg.label,
      n: ms.length,
      tools: cfg.floor ? null : cfg.expectTools,
      medianMs: median(ms),
      p95Ms: percentile(ms, 95),
      minMs: Math.min(...ms),
      maxMs: Math.max(...ms),
      medianCpuMs: cpu.length > 0 ? median(cpu) : null,
      peakRssMiB: rss.length > 0 ? Math.max(...rss) / 1024 : null,
      medianPeakRssMiB: rss.length > 0 ? median(rss) / 1024 : null,
      medianSettledCpuMs: settledCpu.length > 0 ? median(settledCpu) : null,
      settledPeakRssMiB: settledRss.length > 0 ? Math.max(...settledRss) / 1024 : null,
      maxCloseMs: cfg.floor ? null : Math.max(...samples[cfg.id].map((s) => s.closeMs)),
    };
  }
  const bareMedian = summary.bare.medianMs;
  for (const s of Object.values(summary)) {
    s.ratioToBare = s.medianMs / bareMedian;
    s.cpuRatioToBare =
      s.medianCpuMs === null || summary.bare.medianCpuMs === null
        ? null
        : s.medianCpuMs / summary.bare.medianCpuMs;
  }
  const warmLabels = {
    bare: `warm call: bare ${warm.bare?.tool}`,
    [answerCfg.id]: `warm call: ${answerCfg.label} (${measured.answerBytes?.toLocaleString('en')} bytes)`,
  };
  const warmSummary = Object.fromEntries(
    [...warmCfgs, ...(warm[answerCfg.id] === undefined ? [] : [answerCfg])].map((cfg) => [
      cfg.id,
      {
        label: warmLabels[cfg.id] ?? `warm call: ${cfg.label}, tool ${warm[cfg.id].tool}`,
        tool: warm[cfg.id].tool,
        n: warm[cfg.id].ms.length,
        medianMs: median(warm[cfg.id].ms),
        p95Ms: percentile(warm[cfg.id].ms, 95),
        firstCalls: warm[cfg.id].first.length,
        firstMedianMs: median(warm[cfg.id].first),
        firstP95Ms: percentile(warm[cfg.id].first, 95),
      },
    ]),
  );
  for (const w of Object.values(warmSummary)) {
    w.ratioToBare = w.medianMs / warmSummary.bare.medianMs;
    w.firstRatioToBare = w.firstMedianMs / warmSummary.bare.firstMedianMs;
  }
  const answerRef = warmSummary[answerCfg.id];
  if (answerRef !== undefined) {
    for (const [id, w] of Object.entries(warmSummary)) {
      if (id !== 'bare' && id !== answerCfg.id) w.ratioToAnswerRef = w.medianMs / answerRef.medianMs;
    }
  }

  // Table.
  const rows = [
    [
      'config',
      'n',
      'median ms',
      'p95 ms',
      'ratio to bare',
      'CPU ms',
      'CPU ratio',
      'peak RSS MiB',
      'settled: CPU ms',
      'peak RSS MiB',
      'tools',
    ],
  ];
  for (const cfg of order) {
    const s = summary[cfg.id];
    rows.push([
      s.label,
      s.n,
      fmt(s.medianMs),
      fmt(s.p95Ms),
      `${s.ratioToBare.toFixed(2)}×`,
      fmt(s.medianCpuMs, 0),
      s.cpuRatioToBare === null ? '-' : `${s.cpuRatioToBare.toFixed(2)}×`,
      fmt(s.peakRssMiB),
      fmt(s.medianSettledCpuMs, 0),
      fmt(s.settledPeakRssMiB),
      s.tools ?? '-',
    ]);
  }
  // Per-call rows: the first calls after a start, then the warm ones (columns past the ratio do not apply).
  const callRow = (label, n, medianMs, p95Ms, ratio) =>
    rows.push([label, n, fmt(medianMs, 3), fmt(p95Ms, 3), `${ratio.toFixed(2)}×`, ...Array(6).fill('-')]);
  for (const w of Object.values(warmSummary))
    callRow(
      w.label.replace('warm call:', `first ${w.firstCalls} calls:`),
      w.firstCalls,
      w.firstMedianMs,
      w.firstP95Ms,
      w.firstRatioToBare,
    );
  for (const w of Object.values(warmSummary)) callRow(w.label, w.n, w.medianMs, w.p95Ms, w.ratioToBare);

  const check = (ok) => (ok === null ? 'n/a' : ok ? 'met' : 'MISSED');
  const ratioTarget = (n, limit, watch = false) => {
    const s = summary[`skills-${n}${watch ? '-watch' : ''}`];
    return s === undefined
      ? []
      : [
          {
            target: `${n.toLocaleString('en')} skills${watch ? ', watching,' : ''} ≤ ${limit}× bare`,
            actual: `${s.ratioToBare.toFixed(2)}× (${fmt(s.medianMs)} vs ${fmt(bareMedian)} ms)`,
            met: s.ratioToBare <= limit,
          },
        ];
  };
  const s10000 = summary['skills-10000'];
  const s10000w = summary['skills-10000-watch'];
  const warmSkill = warmSummary[`skills-${warmSize}`];
  const targets = [
    ...ratioTarget(10, TARGETS.ratio10),
    ...ratioTarget(100, TARGETS.ratio100),
    ...ratioTarget(1000, TARGETS.ratio1000),
    ...ratioTarget(10000, TARGETS.ratio10000),
    ...ratioTarget(10000, TARGETS.ratio10000, true),
    ...(s10000 === undefined
      ? []
      : [
          {
            target: `10,000 skills ≤ ${TARGETS.rss10000MiB} MiB peak RSS`,
            actual:
              s10000.peakRssMiB === null
                ? 'not measured (no /proc)'
                : `${fmt(s10000.peakRssMiB)} MiB (${(s10000.peakRssMiB / TARGETS.rss10000MiB).toFixed(2)}× the limit)`,
            met: s10000.peakRssMiB === null ? null : s10000.peakRssMiB <= TARGETS.rss10000MiB,
          },
        ]),
    ...(s10000w === undefined
      ? []
      : [
          {
            target: `10,000 skills, watching, ≤ ${TARGETS.rss10000MiB} MiB peak RSS once settled`,
            actual:
              s10000w.settledPeakRssMiB === null
                ? 'not measured (no /proc, or never quiet)'
                : `${fmt(s10000w.settledPeakRssMiB)} MiB (${(s10000w.settledPeakRssMiB / TARGETS.rss10000MiB).toFixed(2)}× the limit)`,
            met: s10000w.settledPeakRssMiB === null ? null : s10000w.settledPeakRssMiB <= TARGETS.rss10000MiB,
          },
        ]),
    ...(warmSkill === undefined
      ? []
      : [
          {
            target: `warm skill call ≤ ${TARGETS.warmCallRatio}× bare (median, after ${WARMUP_CALLS} calls each)`,
            actual: `${warmSkill.ratioToBare.toFixed(2)}× (${fmt(warmSkill.medianMs, 3)} vs ${fmt(warmSummary.bare.medianMs, 3)} ms)`,
            met: warmSkill.ratioToBare <= TARGETS.warmCallRatio,
          },
        ]),
  ];

  out(`skills-mcp start-up: spawn → initialize → tools/list (legacy era), ${RUNS} interleaved runs per row`);
  out(
    `${machine.cpu}, ${machine.cores} cores, ${machine.totalMemMiB} MiB, node ${machine.node}, ${machine.kernel}`,
  );
  out(
    `load average at start ${machine.loadavgAtStart.join(' ')}, at end ${os
      .loadavg()
      .map((x) => x.toFixed(2))
      .join(' ')}`,
  );
  out(
    `tools mode: ${TOOLS_MODE ?? 'server default'}; p95 = nearest rank; peak RSS = max VmHWM over the runs`,
  );
  out();
  for (const line of table(rows)) out(line);
  out();
  out('targets:');
  for (const line of table([
    ['target', 'actual', 'status'],
    ...targets.map((t) => [t.target, t.actual, check(t.met)]),
  ]))
    out(line);
  if (answerRef !== undefined) {
    const ours = Object.entries(warmSummary)
      .filter(([id]) => id !== 'bare' && id !== answerCfg.id)
      .map(([, w]) => `${w.label.replace('warm call: ', '')} ${w.ratioToAnswerRef.toFixed(2)}×`);
    out();
    out(
      `the answer's cost (warm calls): a bare SDK server answering skills-mcp's answer (${measured.answerBytes.toLocaleString('en')} bytes of JSON) ${answerRef.ratioToBare.toFixed(2)}× the trivial one; against that server: ${ours.join('; ')}`,
    );
  }
  const slowClose = Object.values(summary).filter((s) => s.maxCloseMs !== null && s.maxCloseMs > 1500);
  for (const s of slowClose) {
    out(
      `note: ${s.label} took up to ${s.maxCloseMs.toFixed(0)} ms to exit after stdin closed (killed by the client?)`,
    );
  }

  const result = {
    bench: 'startup',
    date: started.toISOString(),
    finished: new Date().toISOString(),
    machine: { ...machine, loadavgAtEnd: os.loadavg().map((x) => round(x)) },
    settings: {
      runs: RUNS,
      warmupRounds: 1,
      calls: CALLS,
      warmupCalls: WARMUP_CALLS,
      firstCalls: FIRST_CALLS,
      sizes: SIZES,
      toolsMode: TOOLS_MODE ?? null,
      era: 'legacy',
      order: order.map((c) => c.id),
      commands: Object.fromEntries(
        order.map((c) => [
          c.id,
          c.floor ? 'node -e 0' : `node ${c.args.map((a) => a.replace(tmpRoot, '$TMP')).join(' ')}`,
        ]),
      ),
      generatedBytes: Object.fromEntries(SIZES.map((n) => [n, generated[n].bytes])),
    },
    targets: targets.map((t) => ({ ...t, status: check(t.met) })),
    baseline: BASELINE ?? null,
    summary,
    warmCalls: warmSummary,
    warmAnswerBytes: measured.answerBytes,
    verified: Object.fromEntries(
      Object.entries(verified).map(([id, v]) => [id, { ...v, stderr: v.stderr.slice(0, 4000) }]),
    ),
    samples: Object.fromEntries(
      Object.entries(samples).map(([id, xs]) => [
        id,
        xs.map((s) => ({
          ms: round(s.ms, 3),
          cpuMs: s.cpuMs,
          rssKiB: s.rssKiB,
          ...(s.settledCpuMs === undefined
            ? {}
            : { settledCpuMs: s.settledCpuMs, settledRssKiB: s.settledRssKiB }),
          closeMs: round(s.closeMs, 1),
        })),
      ]),
    ),
    warmCallSamples: Object.fromEntries(
      Object.entries(warm).map(([id, w]) => [id, w.ms.map((x) => round(x, 4))]),
    ),
    firstCallSamples: Object.fromEntries(
      Object.entries(warm).map(([id, w]) => [id, w.first.map((x) => round(x, 4))]),
    ),
  };
  mkdirSync(dirname(RESULTS), { recursive: true });
  writeFileSync(RESULTS, `${JSON.stringify(result, null, 2)}\n`);
  out();
  out(`raw samples: ${RESULTS}`);
}

async function cleanup() {
  await Promise.all([...live].map((s) => s.close().catch(() => {})));
  if (tmpRoot !== undefined && process.env.BENCH_KEEP !== '1')
    rmSync(tmpRoot, { recursive: true, force: true });
  else if (tmpRoot !== undefined) note(`kept ${tmpRoot}`);
}

let interrupted = false;
const onSignal = (signal) => {
  if (interrupted) return;
  interrupted = true;
  note(`${signal}: cleaning up`);
  void cleanup().finally(() => process.exit(130));
};
process.once('SIGINT', onSignal);
process.once('SIGTERM', onSignal);

main().then(
  () => cleanup().then(() => process.exit(0)),
  (err) => {
    note(`failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
    return cleanup().then(() => process.exit(1));
  },
);
