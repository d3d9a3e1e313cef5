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
// The first gated run is timed on a fresh state folder (the server's first session ever) and on one a session of
// another server process used before (a new session of an installed server: its copies and audit log exist).
// Knobs: BENCH_SIZES, BENCH_ROUNDS (default 3), BENCH_CALLS (300), BENCH_WARMUP (300), BENCH_GATED_ROUNDS (5),
// BENCH_CPU_PROF=<folder>: this build's servers of the load runs write V8 CPU profiles there (node --cpu-prof), one
// per size and round, summarized by `node bench/profile-summary.mjs <folder>/<file>`.
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
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

const PROF = process.env.BENCH_CPU_PROF ? resolve(process.env.BENCH_CPU_PROF) : undefined;
const builds = [{ name: 'this build', cli: join(repo, 'dist', 'cli.js') }];
if (process.env.BENCH_BASELINE_CLI)
  builds.push({ name: 'baseline', cli: resolve(process.env.BENCH_BASELINE_CLI) });
const servers = [
  ...builds.map((b) => ({
    ...b,
    args: (dir, prof) => [
      ...(PROF !== undefined && prof !== undefined && b.name === 'this build'
        ? ['--cpu-prof', `--cpu-prof-dir=${PROF}`, `--cpu-prof-name=${prof}.cpuprofile`]
        : []),
      b.cli,
      '--skills',
      dir,
      '--no-watch',
      '--log-level',
      'warn',
    ],
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

async function oneLoadRun(server, dir, skill, n, round) {
  const { client, transport, list, startMs } = await connect(server.args(dir, `skill-load-${n}-r${round}`));
  try {
    const rssMiB = peakRssMiB(transport.pid);
    const skillTools = list.tools.filter((t) => t.name !== 'load_skill' && !t.name.includes('_skill'));
    const listBytes = bytes(list);
    // What a client hands its model about the catalog before any load: the server's instructions and the tools.
    const instructionsBytes = Buffer.byteLength(client.getInstructions() ?? '');
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
      catalogBytesPerSkill: (listBytes + instructionsBytes) / n,
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

async function oneGatedRun(build, tmp, pauseMs, usedState) {
  const state = usedState ?? mkdtempSync(join(tmp, 'gated-'));
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
    return {
      server: build.name,
      pauseMs,
      state: usedState === undefined ? 'fresh' : 'used',
      firstMs,
      warmMs: warm,
      warmMedianMs: median(warm),
    };
  } finally {
    await client.close();
  }
}

/**
 * The tools/list of a server that lists its skills in the description of one `skill` tool, as skilljack does (its
 * README: an `<available_skills>` block of names and descriptions): built from the same SKILL.md files, not run.
 */
function modelledListBytes(dir) {
  const skills = readdirSync(dir).map((name) => {
    const head = readFileSync(join(dir, name, 'SKILL.md'), 'utf8').slice(0, 2048);
    return { name, description: /^description:\s*"?(.*?)"?\s*$/m.exec(head)?.[1] ?? name };
  });
  const listing = skills
    .map((s) => `<skill><name>${s.name}</name><description>${s.description}</description></skill>`)
    .join('\n');
  const tool = {
    name: 'skill',
    description: `Load a skill's full instructions by name.\n\n<available_skills>\n${listing}\n</available_skills>`,
    inputSchema: {
      type: 'object',
      properties: { name: { type: 'string', description: 'Skill name' } },
      required: ['name'],
      $schema: 'https://json-schema.org/draft/2020-12/schema',
    },
  };
  return bytes({ tools: [tool] });
}

const tmp = mkdtempSync(join(os.tmpdir(), 'skills-mcp-bench-load-'));
const raw = {
  machine: `${os.cpus().length} × ${os.cpus()[0]?.model}`,
  node: process.version,
  loads: [],
  load: [],
  gated: [],
  modelled: {},
};
try {
  out(`machine: ${raw.machine}, node ${raw.node}; load average at start: ${uptime()}`);
  for (const n of SIZES) {
    const dir = join(tmp, `skills-${n}`);
    mkdirSync(dir);
    generateSkills(dir, n, 44);
    raw.modelled[n] = modelledListBytes(dir) / n;
    const skill = 'analyze-api-spec-0000';
    raw.loads.push({ size: n, at: 'start', uptime: uptime() });
    for (let r = 0; r < ROUNDS; r++)
      for (const server of r % 2 === 0 ? servers : [...servers].reverse())
        raw.load.push({ round: r, ...(await oneLoadRun(server, dir, skill, n, r)) });
    raw.loads.push({ size: n, at: 'end', uptime: uptime() });
  }
  // One state folder per build for the "used" sessions, used once by a session before the first timed one.
  const used = new Map(builds.map((b) => [b.name, mkdtempSync(join(tmp, 'used-'))]));
  for (const b of builds) await oneGatedRun(b, tmp, FIRST_PAUSE_MS, used.get(b.name));
  for (let r = 0; r < GATED_ROUNDS; r++)
    for (const pause of [0, FIRST_PAUSE_MS])
      for (const state of ['fresh', 'used'])
        for (const build of r % 2 === 0 ? builds : [...builds].reverse())
          raw.gated.push({
            round: r,
            ...(await oneGatedRun(build, tmp, pause, state === 'used' ? used.get(build.name) : undefined)),
          });
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
      'catalog B/skill',
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
        Math.round(of(n, s, 'catalogBytesPerSkill')),
        round(of(n, s, 'startMs'), 0),
        round(of(n, s, 'startMs') / ref(n, 'startMs'), 2),
        round(of(n, s, 'rssMiB'), 1),
      ]);
    }
  table(rows);
  out(
    `one skill tool listing every skill in its description (skilljack's layout, modelled on the same skills): ${SIZES.map((n) => `${n}: ${Math.round(raw.modelled[n])} B/skill`).join(', ')}`,
  );
  const mine = (n) => of(n, 'this build', 'callMedianMs');
  out(
    `this build: warm call at ${SIZES.at(-1)} ÷ at ${SIZES[0]} skills: ${round(mine(SIZES.at(-1)) / mine(SIZES[0]), 2)}`,
  );

  out(
    `\nFirst gated run of a session vs warm (csv-stats, policy allow; medians of ${GATED_ROUNDS} sessions)`,
  );
  const grows = [['server', 'state folder', 'first call after', 'first ms', 'warm ms', 'first ÷ warm']];
  for (const b of builds)
    for (const state of ['fresh', 'used'])
      for (const pause of [0, FIRST_PAUSE_MS]) {
        const xs = raw.gated.filter((g) => g.server === b.name && g.pauseMs === pause && g.state === state);
        const ratio = median(xs.map((g) => g.firstMs / g.warmMedianMs));
        grows.push([
          b.name,
          state,
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
