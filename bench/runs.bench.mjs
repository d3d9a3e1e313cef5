// Gated-run overhead benchmark (`npm run bench runs`).
//
// Warm end-to-end `tools/call` of the bundled Python skill csv-stats, allowed by policy (no approval asked), through
// the real server over stdio — policy, bundle hashing, audit events with synchronous=FULL, the bubblewrap sandbox and
// output collection — interleaved with running the same script directly from Node (spawn python3, input on stdin).
// Reports medians and the overhead; target: ≤ 25 ms median overhead over direct spawn on this machine.
// Every sample starts after a quiet pause (SETTLE_MS), so neither side pays for the other's aftermath: the server
// tidies up after a run (releases its cgroup, pre-spawns the next sandbox launcher) a moment after answering.
// Writes bench/results/runs.json. Needs a built dist/ (`npm run bench` builds first). BENCH_RUNS (default 40).
import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import process from 'node:process';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport, getDefaultEnvironment } from '@modelcontextprotocol/client/stdio';
import { removeTree } from '../dist/envs/env-store.js';

const here = dirname(fileURLToPath(import.meta.url));
const repo = resolve(here, '..');
const RUNS = Number(process.env.BENCH_RUNS ?? 40);
const WARMUP = 5;
const SETTLE_MS = 100;
const script = join(repo, 'skills', 'csv-stats', 'scripts', 'main.py');
const input = readFileSync(join(repo, 'skills', 'csv-stats', 'assets', 'example-input.json'), 'utf8');

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const p95 = (xs) => [...xs].sort((a, b) => a - b)[Math.ceil(xs.length * 0.95) - 1];

// The real interpreter, as the sandbox resolves it (python3 on PATH may be a slow pyenv shim script).
const python = spawnSync('python3', ['-c', 'import os, sys; print(os.path.realpath(sys.executable))'], {
  encoding: 'utf8',
}).stdout.trim();

async function direct() {
  await sleep(SETTLE_MS);
  return new Promise((res, rej) => {
    const t0 = performance.now();
    const child = spawn(python, [script], { stdio: ['pipe', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.on('error', rej);
    child.on('close', (code) =>
      code === 0 && out.includes('"rows"')
        ? res(performance.now() - t0)
        : rej(new Error(`direct run failed (${code})`)),
    );
    child.stdin.end(input);
  });
}

const tmp = mkdtempSync(join(os.tmpdir(), 'skills-mcp-bench-runs-'));
try {
  const config = join(tmp, 'skills-mcp.yaml');
  writeFileSync(config, 'approval:\n  mode: allow\n  fallback: rules-only\n');
  mkdirSync(join(tmp, 'state'));
  const client = new Client({ name: 'bench', version: '1' }, { capabilities: {} });
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [
      join(repo, 'dist', 'cli.js'),
      '--skills',
      join(repo, 'skills'),
      '--config',
      config,
      '--audit',
      join(tmp, 'state', 'audit.db'),
      '--no-watch',
      '--log-level',
      'warn',
    ],
    env: getDefaultEnvironment(),
    stderr: 'inherit',
  });
  await client.connect(transport);
  const args = JSON.parse(input);
  const viaServer = async () => {
    await sleep(SETTLE_MS);
    const t0 = performance.now();
    const r = await client.callTool({ name: 'csv-stats', arguments: args });
    if (r.isError) throw new Error(`server run failed: ${r.content[0]?.text}`);
    return performance.now() - t0;
  };
  for (let i = 0; i < WARMUP; i++) {
    await viaServer();
    await direct();
  }
  const samples = { direct: [], server: [] };
  for (let i = 0; i < RUNS; i++) {
    if (i % 2 === 0) {
      samples.direct.push(await direct());
      samples.server.push(await viaServer());
    } else {
      samples.server.push(await viaServer());
      samples.direct.push(await direct());
    }
  }
  await client.close();
  const md = median(samples.direct);
  const ms = median(samples.server);
  const rows = [
    [`direct: ${python} main.py (from Node)`, RUNS, md, p95(samples.direct)],
    ['skills-mcp tools/call (policy allow, sandbox, audit)', RUNS, ms, p95(samples.server)],
  ];
  process.stdout.write(
    `${'run'.padEnd(56)}${'n'.padStart(4)}${'median ms'.padStart(12)}${'p95 ms'.padStart(10)}\n`,
  );
  for (const [name, n, m, p] of rows)
    process.stdout.write(
      `${name.padEnd(56)}${String(n).padStart(4)}${m.toFixed(1).padStart(12)}${p.toFixed(1).padStart(10)}\n`,
    );
  const overhead = ms - md;
  process.stdout.write(
    `\nmedian overhead ${overhead.toFixed(1)} ms (target ≤ 25 ms): ${overhead <= 25 ? 'MET' : 'MISSED'}\n`,
  );
  mkdirSync(join(here, 'results'), { recursive: true });
  writeFileSync(
    join(here, 'results', 'runs.json'),
    JSON.stringify(
      {
        date: new Date().toISOString(),
        machine: {
          cpu: os.cpus()[0]?.model,
          cores: os.cpus().length,
          memGiB: Math.round(os.totalmem() / 2 ** 30),
          node: process.version,
          kernel: os.release(),
        },
        runs: RUNS,
        median: { direct: md, server: ms, overhead },
        samples,
      },
      null,
      2,
    ),
  );
} finally {
  removeTree(tmp);
}
