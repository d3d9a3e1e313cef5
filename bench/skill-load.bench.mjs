// Skill-load benchmark ("npm run bench skill-load").
//
// In one interleaved run, over stdio with the real @modelcontextprotocol/client (legacy era), the same generated skill
// folders at 10, 100, 1,000 and 10,000 skills (bench/generate-skills.mjs), three servers:
//   - this build (`dist/cli.js --no-watch`, default tool layout: one tool per skill up to 30, then load_skill),
//   - BENCH_BASELINE_CLI, when set: another build (e.g. main, built into /tmp/old-perf) for the "before" column,
//   - the minimal reference (bench/reference-skill-server.mjs): an SDK v2 server answering the SKILL.md text alone.
// Per size and server: spawn → tools/list (ms), peak RSS after tools/list (VmHWM), tools/list bytes per listed
// skill tool, the answer's bytes (the JSON result; the text a model gets), the warm call's median over BENCH_CALLS
// calls after BENCH_WARMUP calls. Then, for this build and the baseline: the first gated run of a session against a
// warm one (csv-stats allowed by policy, sandboxed, audited), the first call right after tools/list and after a
// pause of FIRST_PAUSE_MS (a model's turn). Prints tables with uptime, writes bench/results/skill-load.json (raw).
// Knobs: BENCH_SIZES, BENCH_ROUNDS (default 3), BENCH_CALLS (300), BENCH_WARMUP (300), BENCH_GATED_ROUNDS (5).
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import process from 'node:process';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport, getDefaultEnvironment } from '@modelcontextprotocol/client/stdio';
import { generateSkills } from './generate-skills.mjs';
import { median, out, round, table } from './support.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const repo = resolve(here, '..');
const num = (name, fallback) => Number(process.env[name] ?? fallback);
const SIZES = (process.env.BENCH_SIZES ?? '10,100,1000,10000').split(',').map(Number);
const ROUNDS = num('BENCH_ROUNDS', 3);
const CALLS = num('BENCH_CALLS', 300);
const WARMUP = num('BENCH_WARMUP', 300);
const GATED_ROUNDS = num('BENCH_GATED_ROUNDS', 5);
const FIRST_PAUSE_MS = 500;
const WARM_GATED = 8;

const builds = [{ name: 'this build', cli: join(repo, 'dist', 'cli.js') }];
if (process.env.BENCH_BASELINE_CLI)
  builds.push({ name: 'baseline', cli: resolve(process.env.BENCH_BASELINE_CLI) });
const servers = [
  ...builds.map((b) => ({
    ...b,
    args: (dir) => [b.cli, '--skills', dir, '--no-watch', '--log-level', 'warn'],
  })),
  { name: 'reference', args: (dir) => [join(here, 'reference-skill-server.mjs'), dir] },
];

const uptime = () =>
  os
    .loadavg()
    .map((x) => x.toFixed(2))
    .join(' ');
const bytes = (x) => Buffer.byteLength(JSON.stringify(x));
const textBytes = (r) =>
  (r.content ?? []).filter((c) => c.type === 'text').reduce((n, c) => n + Buffer.byteLength(c.text), 0);

function peakRssMiB(pid) {
  try {
    const m = /^VmHWM:\s+(\d+)\s+kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) / 1024 : null;
  } catch {
    return null;
  }
}

async function connect(args) {
  const t0 = performance.now();
  const transport = new StdioClientTransport({
    command: process.execPath,
    args,
    env: getDefaultEnvironment(),
    stderr: 'inherit',
  });
  const client = new Client({ name: 'skill-load-bench', version: '1' });
  await client.connect(transport);
  const list = await client.listTools();
  return { client, transport, list, startMs: performance.now() - t0 };
}

/** The call that loads the first skill, as the server's layout offers it. */
function loadCall(list, skill) {
  const own = list.tools.find((t) => t.name === skill);
  return own !== undefined ? { name: own.name, arguments: {} } : { name: 'load_skill', arguments: { skill } };
}

async function oneLoadRun(server, dir, skill, n) {
  const { client, transport, list, startMs } = await connect(server.args(dir));
  try {
    const rssMiB = peakRssMiB(transport.pid);
    const skillTools = list.tools.filter((t) => t.name !== 'load_skill' && !t.name.includes('_skill'));
    const listBytes = bytes(list);
    const call = loadCall(list, skill);
    let result;
    for (let i = 0; i < WARMUP; i++) result = await client.callTool(call);
    if (result.isError) throw new Error(`${server.name}: ${JSON.stringify(result.content)}`);
    const calls = [];
    for (let i = 0; i < CALLS; i++) {
      const s = performance.now();
      await client.callTool(call);
      calls.push(performance.now() - s);
    }
    return {
      size: n,
      server: server.name,
      startMs,
      rssMiB,
      tool: call.name,
      listBytes,
      listBytesPerSkill: skillTools.length > 0 ? listBytes / skillTools.length : null,
      answerBytes: bytes(result),
      textBytes: textBytes(result),
      contentBytes: bytes(result.content),
      callMedianMs: median(calls),
      calls,
    };
  } finally {
    await client.close();
  }
}

async function oneGatedRun(build, tmp, pauseMs) {
  const state = mkdtempSync(join(tmp, 'gated-'));
  const config = join(state, 'skills-mcp.yaml');
  writeFileSync(config, 'approval:\n  mode: allow\n  fallback: rules-only\n');
  const input = JSON.parse(
    readFileSync(join(repo, 'skills', 'csv-stats', 'assets', 'example-input.json'), 'utf8'),
  );
  const args = [
    build.cli,
    '--skills',
    join(repo, 'skills'),
    '--config',
    config,
    '--audit',
    join(state, 'audit.db'),
  ];
  const { client } = await connect([...args, '--no-watch', '--log-level', 'warn']);
  try {
    if (pauseMs > 0) await sleep(pauseMs);
    const call = async () => {
      const s = performance.now();
      const r = await client.callTool({ name: 'csv-stats', arguments: input });
      if (r.isError) throw new Error(`${build.name} gated run: ${JSON.stringify(r.content)}`);
      return performance.now() - s;
    };
    const firstMs = await call();
    const warm = [];
    for (let i = 0; i < WARM_GATED; i++) {
      await sleep(100);
      warm.push(await call());
    }
    return { server: build.name, pauseMs, firstMs, warmMs: warm, warmMedianMs: median(warm) };
  } finally {
    await client.close();
  }
}

const tmp = mkdtempSync(join(os.tmpdir(), 'skills-mcp-bench-load-'));
const raw = {
  machine: `${os.cpus().length} × ${os.cpus()[0]?.model}`,
  node: process.version,
  loads: [],
  load: [],
  gated: [],
};
try {
  out(`machine: ${raw.machine}, node ${raw.node}; load average at start: ${uptime()}`);
  for (const n of SIZES) {
    const dir = join(tmp, `skills-${n}`);
    mkdirSync(dir);
    generateSkills(dir, n, 44);
    const skill = 'analyze-api-spec-0000';
    raw.loads.push({ size: n, at: 'start', uptime: uptime() });
    for (let r = 0; r < ROUNDS; r++)
      for (const server of r % 2 === 0 ? servers : [...servers].reverse())
        raw.load.push({ round: r, ...(await oneLoadRun(server, dir, skill, n)) });
    raw.loads.push({ size: n, at: 'end', uptime: uptime() });
  }
  for (let r = 0; r < GATED_ROUNDS; r++)
    for (const pause of [0, FIRST_PAUSE_MS])
      for (const build of r % 2 === 0 ? builds : [...builds].reverse())
        raw.gated.push({ round: r, ...(await oneGatedRun(build, tmp, pause)) });
  raw.loads.push({ at: 'end', uptime: uptime() });

  const of = (n, s, key) => median(raw.load.filter((x) => x.size === n && x.server === s).map((x) => x[key]));
  const ref = (n, key) => of(n, 'reference', key);
  out(
    `\nSkill load (medians of ${ROUNDS} servers × ${CALLS} warm calls; ratio = ÷ reference in the same run)`,
  );
  const rows = [
    [
      'skills',
      'server',
      'tool',
      'warm ms',
      '× ref',
      'answer B',
      'text B',
      'list B/skill',
      'start ms',
      '× ref',
      'RSS MiB',
    ],
  ];
  for (const n of SIZES)
    for (const s of servers.map((x) => x.name)) {
      const first = raw.load.find((x) => x.size === n && x.server === s);
      const perSkill = of(n, s, 'listBytesPerSkill');
      rows.push([
        n,
        s,
        first.tool,
        round(of(n, s, 'callMedianMs'), 3),
        round(of(n, s, 'callMedianMs') / ref(n, 'callMedianMs'), 2),
        of(n, s, 'answerBytes'),
        of(n, s, 'textBytes'),
        perSkill === null ? '-' : Math.round(perSkill),
        round(of(n, s, 'startMs'), 0),
        round(of(n, s, 'startMs') / ref(n, 'startMs'), 2),
        round(of(n, s, 'rssMiB'), 1),
      ]);
    }
  table(rows);
  const mine = (n) => of(n, 'this build', 'callMedianMs');
  out(
    `this build: warm call at ${SIZES.at(-1)} ÷ at ${SIZES[0]} skills: ${round(mine(SIZES.at(-1)) / mine(SIZES[0]), 2)}`,
  );

  out(
    `\nFirst gated run of a session vs warm (csv-stats, policy allow; medians of ${GATED_ROUNDS} sessions)`,
  );
  const grows = [['server', 'first call after', 'first ms', 'warm ms', 'first ÷ warm']];
  for (const b of builds)
    for (const pause of [0, FIRST_PAUSE_MS]) {
      const xs = raw.gated.filter((g) => g.server === b.name && g.pauseMs === pause);
      const ratio = median(xs.map((g) => g.firstMs / g.warmMedianMs));
      grows.push([
        b.name,
        pause === 0 ? 'tools/list' : `${pause} ms pause`,
        round(median(xs.map((g) => g.firstMs)), 0),
        round(median(xs.map((g) => g.warmMedianMs)), 0),
        round(ratio, 2),
      ]);
    }
  table(grows);
  out(`\nload average at end: ${uptime()}`);
  mkdirSync(join(here, 'results'), { recursive: true });
  writeFileSync(join(here, 'results', 'skill-load.json'), `${JSON.stringify(raw, null, 1)}\n`);
} finally {
  rmSync(tmp, { recursive: true, force: true });
}
