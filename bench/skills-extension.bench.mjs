// Skills extension benchmark ("npm run bench skills-extension").
//
// At 1,000 generated skills, with the real @modelcontextprotocol/client over stdio (legacy era), interleaved
// round-robin so machine noise hits every configuration alike:
//   - spawn → initialize → skills/list (first page, then every page) of skills-mcp, which hashes files on first
//     need, next to the SDK's own folder-backed skills server (bench/sdk-skills-server.mjs), which hashes every
//     file at start-up;
//   - skills-mcp start-up (spawn → initialize → tools/list, as startup.bench.mjs measures it) with the extension
//     and without it (`skills_extension: true` or `false` in a config file), to bound what declaring it costs.
// Untimed first: both servers list the same 1,000 skills with the same digests and sizes.
// Prints a table (medians, p95, load average) and writes bench/results/skills-extension.json.
// Knobs: BENCH_RUNS (rounds, ≥ 5, default 15), BENCH_CLI (another build's cli.js), BENCH_KEEP=1.
import { spawnSync } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import os from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import process from 'node:process';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport, getDefaultEnvironment } from '@modelcontextprotocol/client/stdio';
import * as z from 'zod';
import { generateSkills } from './generate-skills.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const repo = resolve(here, '..');
const CLI = process.env.BENCH_CLI ? resolve(process.env.BENCH_CLI) : join(repo, 'dist', 'cli.js');
const SDK_SERVER = join(here, 'sdk-skills-server.mjs');
const RESULTS = join(here, 'results', 'skills-extension.json');
const COUNT = 1000;
const RUNS = Number(process.env.BENCH_RUNS || 15);
if (!Number.isInteger(RUNS) || RUNS < 5) throw new Error(`BENCH_RUNS must be an integer ≥ 5 (got ${RUNS})`);
const START_BUDGET = 1.05; // start-up with the extension ≤ 5 % above start-up without it

const out = (line = '') => void process.stdout.write(`${line}\n`);
const note = (line) => void process.stderr.write(`skills-extension.bench: ${line}\n`);
const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 === 1 ? s[m] : (s[m - 1] + s[m]) / 2;
};
const p95 = (xs) => [...xs].sort((a, b) => a - b)[Math.max(0, Math.ceil(0.95 * xs.length) - 1)];
const loadavg = () => os.loadavg().map((x) => Number(x.toFixed(2)));

const Page = z.looseObject({
  skills: z.array(z.looseObject({ uri: z.string(), resources: z.unknown() })),
  nextCursor: z.string().optional(),
});

let tmpRoot;
const live = new Set();

/**
 * CPU time the server has used so far, in ms, summed over its threads (/proc/<pid>/task/<tid>/schedstat): far less
 * sensitive than wall time to other load on a shared machine. Null where /proc is missing.
 */
function cpuMs(pid) {
  try {
    let ns = 0;
    for (const tid of readdirSync(`/proc/${pid}/task`))
      ns += Number(readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8').split(' ')[0]);
    return ns / 1e6;
  } catch {
    return null;
  }
}

async function connect(args) {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args,
    cwd: tmpRoot,
    env: { ...getDefaultEnvironment(), SKILLS_MCP_AUDIT: join(tmpRoot, 'audit', 'audit.db') },
    stderr: 'pipe',
  });
  let stderr = '';
  transport.stderr?.on('data', (d) => (stderr += d));
  const client = new Client(
    { name: 'skills-extension-bench', version: '1.0.0' },
    { versionNegotiation: { mode: 'legacy' } },
  );
  const t0 = performance.now();
  await client.connect(transport);
  live.add(client);
  const close = async () => {
    live.delete(client);
    await client.close();
  };
  return { client, t0, close, stderr: () => stderr, cpu: () => cpuMs(transport.pid) };
}

/** spawn → skills/list: time to the first page and to the last one. */
async function measureList(args) {
  const c = await connect(args);
  try {
    let page = await c.client.request({ method: 'skills/list', params: {} }, Page);
    const firstMs = performance.now() - c.t0;
    const skills = [...page.skills];
    while (page.nextCursor !== undefined) {
      page = await c.client.request({ method: 'skills/list', params: { cursor: page.nextCursor } }, Page);
      skills.push(...page.skills);
    }
    const allMs = performance.now() - c.t0;
    const cpu = c.cpu();
    if (skills.length !== COUNT) throw new Error(`${args[0]} listed ${skills.length} skills, not ${COUNT}`);
    return { firstMs, allMs, cpuMs: cpu, skills };
  } finally {
    await c.close();
  }
}

/** spawn → initialize → tools/list (start-up as startup.bench.mjs measures it). */
async function measureStart(args) {
  const c = await connect(args);
  try {
    await c.client.listTools();
    return { ms: performance.now() - c.t0, cpuMs: c.cpu() };
  } finally {
    await c.close();
  }
}

const manifest = (skills) =>
  new Map(skills.flatMap((s) => s.resources.map((r) => [r.uri, `${r.digest} ${r.size}`])));

async function main() {
  if (!existsSync(CLI))
    throw new Error(`${CLI} is missing: run \`npm run build\` first (npm run bench does).`);
  const loadAtStart = loadavg();
  const started = new Date();
  tmpRoot = mkdtempSync(join(os.tmpdir(), 'skills-mcp-ext-bench-'));
  const dir = join(tmpRoot, 'skills');
  mkdirSync(dir);
  const bytes = generateSkills(dir, COUNT, 0x5eed + COUNT);
  // Both start-up figures read a config file, so both pay for the YAML parser alike.
  const onConfig = join(tmpRoot, 'extension.yaml');
  const offConfig = join(tmpRoot, 'no-extension.yaml');
  writeFileSync(onConfig, 'skills_extension: true\n');
  writeFileSync(offConfig, 'skills_extension: false\n');
  const base = [CLI, '--skills', dir, '--no-watch', '--log-level', 'warn'];
  const configs = {
    'ext-list': { label: 'skills-mcp: spawn → skills/list', run: () => measureList(base) },
    'sdk-list': {
      label: 'SDK folder server: spawn → skills/list',
      run: () => measureList([SDK_SERVER, dir]),
    },
    'start-on': {
      label: 'skills-mcp start-up, extension on',
      run: () => measureStart([...base, '--config', onConfig]),
    },
    'start-off': {
      label: 'skills-mcp start-up, extension off',
      run: () => measureStart([...base, '--config', offConfig]),
    },
  };

  note(`verifying: both servers list ${COUNT} skills with the same digests and sizes`);
  const ours = manifest((await measureList(base)).skills);
  const sdk = manifest((await measureList([SDK_SERVER, dir])).skills);
  if (ours.size !== sdk.size || [...ours].some(([uri, v]) => sdk.get(uri) !== v))
    throw new Error(`the manifests differ (${ours.size} files vs ${sdk.size})`);
  const off = await connect([...base, '--config', offConfig]);
  const declared = off.client.getServerCapabilities()?.extensions?.['io.modelcontextprotocol/skills'];
  await off.close();
  if (declared !== undefined) throw new Error('skills_extension: false still declared the extension');

  const ids = Object.keys(configs);
  const samples = Object.fromEntries(ids.map((id) => [id, []]));
  note(`1 warm-up round + ${RUNS} rounds of ${ids.join(', ')}`);
  for (const id of ids) await configs[id].run();
  for (let round = 0; round < RUNS; round++) {
    // Alternate the order so neither start-up figure always follows the other.
    const order = round % 2 === 0 ? ids : [...ids].reverse();
    for (const id of order) {
      const r = await configs[id].run();
      samples[id].push(
        r.ms !== undefined ? { ms: r.ms, cpuMs: r.cpuMs } : { ms: r.firstMs, allMs: r.allMs, cpuMs: r.cpuMs },
      );
    }
    process.stderr.write(`  round ${round + 1}/${RUNS}\r`);
  }
  process.stderr.write('\n');

  const summary = {};
  for (const id of ids) {
    const ms = samples[id].map((s) => s.ms);
    const all = samples[id].map((s) => s.allMs).filter((x) => x !== undefined);
    const cpu = samples[id].map((s) => s.cpuMs).filter((x) => x !== null);
    summary[id] = {
      label: configs[id].label,
      n: ms.length,
      medianMs: median(ms),
      p95Ms: p95(ms),
      serverCpuMedianMs: cpu.length > 0 ? median(cpu) : undefined,
      ...(all.length > 0 ? { allPagesMedianMs: median(all), allPagesP95Ms: p95(all) } : {}),
    };
  }
  const startRatio = summary['start-on'].medianMs / summary['start-off'].medianMs;
  const cpuRatio =
    summary['start-on'].serverCpuMedianMs / summary['start-off'].serverCpuMedianMs || undefined;
  const cpu = os.cpus();
  const machine = {
    cpu: cpu[0]?.model ?? 'unknown',
    cores: cpu.length,
    totalMemMiB: Math.round(os.totalmem() / 1048576),
    node: process.version,
    kernel: `${os.type()} ${os.release()}`,
    commit: spawnSync('git', ['rev-parse', 'HEAD'], { cwd: repo, encoding: 'utf8' }).stdout?.trim() || null,
    loadavgAtStart: loadAtStart,
    loadavgAtEnd: loadavg(),
  };

  const fmt = (x) => (x === undefined ? '-' : x.toFixed(1));
  out(
    `Skills extension at ${COUNT} skills (${(bytes / 1048576).toFixed(1)} MiB), stdio, legacy era, ${RUNS} interleaved rounds`,
  );
  out(
    `${machine.cpu}, ${machine.cores} cores, ${machine.totalMemMiB} MiB, node ${machine.node}, ${machine.kernel}`,
  );
  out(`load average at start ${machine.loadavgAtStart.join(' ')}, at end ${machine.loadavgAtEnd.join(' ')}`);
  out();
  const rows = [
    ['config', 'median ms', 'p95 ms', 'all pages median ms', 'all pages p95 ms', 'server CPU ms'],
  ];
  for (const id of ids) {
    const s = summary[id];
    rows.push([
      s.label,
      fmt(s.medianMs),
      fmt(s.p95Ms),
      fmt(s.allPagesMedianMs),
      fmt(s.allPagesP95Ms),
      fmt(s.serverCpuMedianMs),
    ]);
  }
  const widths = rows[0].map((_, c) => Math.max(...rows.map((r) => r[c].length)));
  rows.forEach((r, i) => {
    out(r.map((cell, c) => (c === 0 ? cell.padEnd(widths[c]) : cell.padStart(widths[c]))).join('  '));
    if (i === 0) out(widths.map((w) => '-'.repeat(w)).join('  '));
  });
  out();
  const met = startRatio <= START_BUDGET;
  out(
    `start-up with the extension: ${startRatio.toFixed(3)}× the figure without it (target ≤ ${START_BUDGET}×): ${met ? 'met' : 'MISSED'}`,
  );
  if (cpuRatio !== undefined)
    out(
      `server CPU time at start-up with the extension: ${cpuRatio.toFixed(3)}× the figure without it (medians)`,
    );
  const result = {
    bench: 'skills-extension',
    date: started.toISOString(),
    machine,
    settings: { runs: RUNS, skills: COUNT, generatedBytes: bytes, era: 'legacy' },
    summary,
    startRatio,
    cpuRatio,
    startBudget: START_BUDGET,
    samples,
  };
  mkdirSync(dirname(RESULTS), { recursive: true });
  writeFileSync(RESULTS, `${JSON.stringify(result, null, 2)}\n`);
  out(`raw samples: ${RESULTS}`);
}

async function cleanup() {
  await Promise.all([...live].map((c) => c.close().catch(() => {})));
  if (tmpRoot !== undefined && process.env.BENCH_KEEP !== '1')
    rmSync(tmpRoot, { recursive: true, force: true });
}

main().then(
  () => cleanup().then(() => process.exit(0)),
  (err) => {
    note(`failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
    return cleanup().then(() => process.exit(1));
  },
);
