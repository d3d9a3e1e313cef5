// What the sandbox costs per call: `python3 -c 'print(1)'` run directly, through the skills-mcp adapter
// (from Node, as the server calls it), through a minimal bwrap line, and through srt (Anthropic's
// sandbox-runtime, the sandbox Claude Code uses). Interleaved rounds, medians, ratios to direct.
// Then a gated call: `tools/call` of the bundled Python skill csv-stats through the real server over stdio, allowed by
// policy (no approval asked; policy, bundle check, audit, sandbox, output collection), interleaved with a minimal
// bwrap line running the same script with the same input on stdin; target ≤ 1.25× the bwrap line (medians).
// Every sample of that pair starts after a quiet pause (GATED_SETTLE_MS), so neither pays for the other's aftermath.
// Run by bench/run.mjs after `npm run build`. Prints a table; writes bench/results/sandbox.json.
// srt is never a dependency: it is fetched with `npx -p @anthropic-ai/sandbox-runtime@0.0.78`; when it
// cannot be installed or run, its row says why.
// SKILLS_MCP_BENCH_BASELINE=<another checkout, built> adds that checkout's adapter as a row of the same rounds, so an
// old and a new adapter are compared side by side on one machine at one time (the ratio is in the JSON);
// BENCH_BASELINE_CLI=<another build's cli.js> serves that build too in the gated call's rounds.
import { execFile, spawn, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, realpathSync, writeFileSync } from 'node:fs';
import { cpus, release, tmpdir, totalmem } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport, getDefaultEnvironment } from '@modelcontextprotocol/client/stdio';
import { silentLogger } from '../dist/log.js';
import { createSandbox, loadProfile, defaultProfilesDir, profileLimits } from '../dist/sandbox/index.js';
import { removeTree } from '../dist/envs/env-store.js';

const here = dirname(fileURLToPath(import.meta.url));
const ROUNDS = Number(process.env.SKILLS_MCP_BENCH_RUNS ?? 30);
const WARMUP = 3;
const SRT_PKG = '@anthropic-ai/sandbox-runtime@0.0.78';
const CODE = 'print(1)';
const repo = resolve(here, '..');
const GATED_ROUNDS = Number(process.env.SKILLS_MCP_BENCH_GATED_RUNS || 40);
if (!Number.isInteger(GATED_ROUNDS) || GATED_ROUNDS < 1)
  throw new Error(
    `SKILLS_MCP_BENCH_GATED_RUNS must be a positive integer (got ${process.env.SKILLS_MCP_BENCH_GATED_RUNS})`,
  );
const GATED_SETTLE_MS = 100;
const GATED_TARGET = 1.25;
const CSV_SCRIPT = join(repo, 'skills', 'csv-stats', 'scripts', 'main.py');
const CSV_INPUT = readFileSync(join(repo, 'skills', 'csv-stats', 'assets', 'example-input.json'), 'utf8');

/** Spawns a command and resolves with its wall time in ms; rejects unless it printed "1" and exited 0. */
function timed(cmd, args, opts = {}) {
  return new Promise((resolve, reject) => {
    const t = performance.now();
    const child = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'], ...opts });
    let out = '';
    let err = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (err += d));
    child.on('error', reject);
    child.on('close', (code) => {
      const ms = performance.now() - t;
      if (code === 0 && out.trim() === '1') resolve(ms);
      else reject(new Error(`${cmd} exited ${code}: ${(err || out).trim().split('\n').slice(-2).join(' ')}`));
    });
  });
}

function findSrt() {
  return new Promise((resolve) => {
    execFile(
      'npx',
      ['-y', '-p', SRT_PKG, '-c', 'command -v srt'],
      { timeout: 300_000 },
      (err, stdout, stderr) => {
        if (err)
          resolve({
            reason: `npx could not install ${SRT_PKG}: ${(stderr || err.message).trim().split('\n').pop()}`,
          });
        else resolve({ bin: stdout.trim().split('\n').pop() });
      },
    );
  });
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};
const pct = (xs, p) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(p * xs.length))];

/** Runs `cmd args` with `input` on stdin; resolves with its wall time in ms if it exits 0 printing csv-stats' answer. */
function timedWithInput(cmd, args, input) {
  return new Promise((resolvePromise, reject) => {
    const t = performance.now();
    const child = spawn(cmd, args, { stdio: ['pipe', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (err += d));
    child.on('error', reject);
    child.on('close', (code) => {
      const ms = performance.now() - t;
      if (code === 0 && out.includes('"rows"')) resolvePromise(ms);
      else reject(new Error(`${cmd} exited ${code}: ${(err || out).trim().split('\n').slice(-2).join(' ')}`));
    });
    child.stdin.end(input);
  });
}

/**
 * The gated call of csv-stats through the server (policy allow) next to a minimal bwrap line running the same script
 * with the same interpreter the sandbox resolves, interleaved, each sample after a quiet pause.
 */
async function gatedCall(python) {
  const tmp = mkdtempSync(join(tmpdir(), 'skills-mcp-bench-gated-'));
  const config = join(tmp, 'skills-mcp.yaml');
  writeFileSync(config, 'approval:\n  mode: allow\n  fallback: rules-only\n');
  const clients = [];
  /** A server of `cli` with its own audit log and state, and a function that makes one timed call through it. */
  const serve = async (cli, name) => {
    const dir = mkdtempSync(join(tmp, `${name}-`));
    const client = new Client({ name: 'sandbox-bench', version: '1' }, { capabilities: {} });
    clients.push(client);
    await client.connect(
      new StdioClientTransport({
        command: process.execPath,
        args: [
          cli,
          '--skills',
          join(repo, 'skills'),
          '--config',
          config,
          '--audit',
          join(dir, 'audit.db'),
          '--no-watch',
          '--log-level',
          'warn',
        ],
        cwd: dir,
        env: getDefaultEnvironment(),
        stderr: 'inherit',
      }),
    );
    return async () => {
      const t = performance.now();
      const r = await client.callTool({ name: 'csv-stats', arguments: JSON.parse(CSV_INPUT) });
      const ms = performance.now() - t;
      if (r.isError) throw new Error(`gated call failed: ${r.content?.[0]?.text}`);
      return ms;
    };
  };
  try {
    const cli = process.env.BENCH_CLI ? resolve(process.env.BENCH_CLI) : join(repo, 'dist', 'cli.js');
    const baseline = process.env.BENCH_BASELINE_CLI ? resolve(process.env.BENCH_BASELINE_CLI) : undefined;
    const bwrapLine = () =>
      timedWithInput(
        '/usr/bin/bwrap',
        [
          '--ro-bind',
          '/',
          '/',
          '--dev',
          '/dev',
          '--proc',
          '/proc',
          '--unshare-all',
          '--die-with-parent',
        ].concat([python, CSV_SCRIPT]),
        CSV_INPUT,
      );
    const rows = [
      { name: 'skills-mcp tools/call csv-stats (policy allow)', fn: await serve(cli, 'this'), samples: [] },
      { name: 'bwrap, minimal line, same script and input', fn: bwrapLine, samples: [] },
      ...(baseline === undefined
        ? []
        : [
            {
              name: 'older build (BENCH_BASELINE_CLI), same call',
              fn: await serve(baseline, 'older'),
              samples: [],
            },
          ]),
    ];
    for (let round = 0; round < WARMUP + GATED_ROUNDS; round++) {
      for (let i = 0; i < rows.length; i++) {
        const row = rows[(i + round) % rows.length];
        await sleep(GATED_SETTLE_MS);
        const ms = await row.fn();
        if (round >= WARMUP) row.samples.push(ms);
      }
    }
    const bwrapMedian = median(rows[1].samples);
    return rows.map((r) => ({
      group: `${python} csv-stats/scripts/main.py`,
      name: r.name,
      runs: r.samples.length,
      medianMs: Math.round(median(r.samples) * 10) / 10,
      p90Ms: Math.round(pct(r.samples, 0.9) * 10) / 10,
      ratioToBwrap: Math.round((median(r.samples) / bwrapMedian) * 100) / 100,
      // The target is judged on this one: a rounded 1.25 may be 1.254.
      exactRatioToBwrap: median(r.samples) / bwrapMedian,
      samples: r.samples.map((x) => Math.round(x * 100) / 100),
    }));
  } finally {
    for (const c of clients) await c.close().catch(() => {});
    removeTree(tmp);
  }
}

async function main() {
  const sandbox = createSandbox({ log: silentLogger(), env: process.env });
  const probe = await sandbox.probe();
  if (!probe.healthy) throw new Error(`sandbox unavailable: ${probe.diagnosis.message}`);
  const profile = await loadProfile(defaultProfilesDir(), 'default');
  const pathPython = (await sandbox.interpreters.resolve('python3')).command;
  const systemPython = realpathSync('/usr/bin/python3');
  const interpreters = [...new Set([pathPython, systemPython])];

  const baselineDir = process.env.SKILLS_MCP_BENCH_BASELINE;
  const baseline =
    baselineDir === undefined || baselineDir === ''
      ? undefined
      : await (async () => {
          const mod = await import(pathToFileURL(join(baselineDir, 'dist', 'sandbox', 'index.js')).href);
          const log = await import(pathToFileURL(join(baselineDir, 'dist', 'log.js')).href);
          const sb = mod.createSandbox({ log: log.silentLogger(), env: process.env });
          if (!(await sb.probe()).healthy)
            throw new Error(`baseline sandbox in ${baselineDir} is unavailable`);
          const label = spawnSync('git', ['-C', baselineDir, 'log', '-1', '--format=%h'], {
            encoding: 'utf8',
          });
          return { sandbox: sb, label: label.stdout.trim() || baselineDir };
        })();

  const srt = await findSrt();
  if (srt.bin !== undefined) {
    await timed(srt.bin, ['-c', `${systemPython} -c '${CODE}'`]).catch((e) => {
      srt.reason = `srt failed to run: ${e.message}`;
      delete srt.bin;
    });
  }

  const rows = [];
  for (const py of interpreters) {
    const group = py === systemPython ? `${py} (system)` : `${py} (first on PATH)`;
    const add = (name, fn) => rows.push({ group, name, fn, samples: [] });
    add('direct', () => timed(py, ['-c', CODE]));
    const viaAdapter = (sb) => async () => {
      const t = performance.now();
      const r = await sb.run({
        argv: [py, '-c', CODE],
        cwd: '/tmp',
        env: {},
        readOnlyPaths: [],
        writablePaths: [],
        network: 'none',
        profile: 'default',
        limits: profileLimits(profile),
      });
      const ms = performance.now() - t;
      if (r.exitCode !== 0 || r.stdout.toString().trim() !== '1') throw new Error(r.stderr.toString());
      return ms;
    };
    add('skills-mcp adapter (from Node)', viaAdapter(sandbox));
    if (baseline !== undefined)
      add(`skills-mcp adapter, baseline ${baseline.label}`, viaAdapter(baseline.sandbox));
    add('bwrap, minimal line', () =>
      timed('/usr/bin/bwrap', [
        '--ro-bind',
        '/',
        '/',
        '--dev',
        '/dev',
        '--proc',
        '/proc',
        '--unshare-all',
        '--die-with-parent',
        py,
        '-c',
        CODE,
      ]),
    );
    if (srt.bin !== undefined) add(`srt -c (${SRT_PKG})`, () => timed(srt.bin, ['-c', `${py} -c '${CODE}'`]));
    else rows.push({ group, name: `srt -c (${SRT_PKG})`, unavailable: srt.reason, samples: [] });
  }

  const live = rows.filter((r) => r.fn !== undefined);
  for (let round = 0; round < WARMUP + ROUNDS; round++) {
    for (let i = 0; i < live.length; i++) {
      const row = live[(i + round) % live.length]; // rotate the order each round
      const ms = await row.fn();
      if (round >= WARMUP) row.samples.push(ms);
    }
  }
  await sandbox.dispose();
  await baseline?.sandbox.dispose();
  const gated = await gatedCall(pathPython);

  const results = rows.map((r) => {
    const direct = rows.find((x) => x.group === r.group && x.name === 'direct');
    if (r.unavailable !== undefined) return { group: r.group, name: r.name, unavailable: r.unavailable };
    const med = median(r.samples);
    return {
      group: r.group,
      name: r.name,
      runs: r.samples.length,
      medianMs: Math.round(med * 10) / 10,
      p90Ms: Math.round(pct(r.samples, 0.9) * 10) / 10,
      ratioToDirect: Math.round((med / median(direct.samples)) * 100) / 100,
      ...(r.name.startsWith('skills-mcp adapter, baseline')
        ? {
            newOverBaseline:
              Math.round(
                (median(
                  rows.find((x) => x.group === r.group && x.name.startsWith('skills-mcp adapter (')).samples,
                ) /
                  med) *
                  100,
              ) / 100,
          }
        : {}),
    };
  });

  const machine = {
    date: new Date().toISOString(),
    kernel: `Linux ${release()}`,
    cpus: `${cpus().length} × ${cpus()[0]?.model ?? '?'}`,
    memoryGiB: Math.round(totalmem() / 2 ** 30),
    node: process.version,
    serverUid: process.getuid?.(),
    bwrap: probe.version,
    limits: probe.limits,
  };
  const lines = [
    `sandbox: python3 -c '${CODE}', ${ROUNDS} interleaved runs each (after ${WARMUP} warm-up rounds)`,
    `${machine.kernel}, ${machine.cpus}, Node ${machine.node}, ${machine.bwrap}, server uid ${machine.serverUid}, limits ${probe.limits.cgroup}`,
    '',
    `${'interpreter'.padEnd(62)}${'how'.padEnd(42)}${'median ms'.padStart(10)}${'p90 ms'.padStart(9)}${'× direct'.padStart(10)}`,
  ];
  for (const r of results) {
    lines.push(
      r.unavailable !== undefined
        ? `${r.group.padEnd(62)}${r.name.padEnd(42)}  unavailable: ${r.unavailable}`
        : `${r.group.padEnd(62)}${r.name.padEnd(42)}${r.medianMs.toFixed(1).padStart(10)}${r.p90Ms.toFixed(1).padStart(9)}${r.ratioToDirect.toFixed(2).padStart(10)}`,
    );
  }
  for (const r of results.filter((x) => x.newOverBaseline !== undefined))
    lines.push(
      `${r.group}: this adapter / ${r.name.replace('skills-mcp adapter, ', '')} = ${r.newOverBaseline.toFixed(2)}`,
    );
  const gatedRatio = gated[0].exactRatioToBwrap;
  lines.push(
    '',
    `gated call, ${GATED_ROUNDS} interleaved runs each (after ${WARMUP} warm-up rounds, ${GATED_SETTLE_MS} ms pause before each)`,
    `${'script'.padEnd(72)}${'how'.padEnd(48)}${'median ms'.padStart(10)}${'p90 ms'.padStart(9)}${'× bwrap'.padStart(9)}`,
    ...gated.map(
      (r) =>
        `${r.group.padEnd(72)}${r.name.padEnd(48)}${r.medianMs.toFixed(1).padStart(10)}${r.p90Ms.toFixed(1).padStart(9)}${r.ratioToBwrap.toFixed(2).padStart(9)}`,
    ),
    `target: gated call ≤ ${GATED_TARGET}× the minimal bwrap line: ${gatedRatio.toFixed(3)}× ${gatedRatio <= GATED_TARGET ? 'met' : 'MISSED'}`,
  );
  process.stdout.write(`${lines.join('\n')}\n`);
  mkdirSync(join(here, 'results'), { recursive: true });
  writeFileSync(
    join(here, 'results', 'sandbox.json'),
    `${JSON.stringify({ machine, rounds: ROUNDS, results, gated: { rounds: GATED_ROUNDS, target: GATED_TARGET, results: gated } }, null, 2)}\n`,
  );
}

main().catch((e) => {
  process.stderr.write(`sandbox bench failed: ${e.stack ?? e}\n`);
  process.exit(1);
});
