// Git-source check benchmark ("npm run bench git-check").
//
// The check a call of a git source's skill makes (dist/skills/check-git-source.js, as `verify` of the served root calls
// it, with the server's per-source cache) on a checkout of 10, 1,000 and 10,000 files, fetched from a local
// repository made here. Per size: the first check (every file hashed into a scratch index) and the median and p95 of
// BENCH_CALLS later checks. Prints a table with the load average; writes bench/results/git-check.json.
// Knobs: BENCH_SIZES (default 10,1000,10000), BENCH_CALLS (default 50).
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import process from 'node:process';
import { fileURLToPath } from 'node:url';
import { median, percentile, round, table } from './support.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const repo = resolve(here, '..');
const SIZES = (process.env.BENCH_SIZES ?? '10,1000,10000').split(',').map(Number);
const CALLS = Number(process.env.BENCH_CALLS ?? 50);
const dist = (f) => import(join(repo, 'dist', 'skills', f));
const { checkGitSource, createCheckCache } = await dist('check-git-source.js');
const { fetchGitSource } = await dist('fetch-git-source.js');
const { checkoutDir } = await dist('git-checkout.js');

const work = mkdtempSync(join(os.tmpdir(), 'skills-mcp-bench-git-'));
const env = { PATH: process.env.PATH, HOME: work };
const gitEnv = { ...env, GIT_CONFIG_GLOBAL: '/dev/null', GIT_CONFIG_NOSYSTEM: '1' };
const git = (cwd, ...args) =>
  execFileSync('git', ['-c', 'user.name=b', '-c', 'user.email=b@example.invalid', ...args], {
    cwd,
    env: gitEnv,
    encoding: 'utf8',
  }).trim();

const rows = [['files', 'first check ms', 'per-call median ms', 'per-call p95 ms', 'load avg (1 min)']];
const results = [];
try {
  for (const size of SIZES) {
    const origin = join(work, `origin-${size}`);
    const skill = join(origin, 'skills', 'big');
    mkdirSync(join(skill, 'data'), { recursive: true });
    git(origin, 'init', '--quiet', '-b', 'main');
    writeFileSync(join(skill, 'SKILL.md'), '---\nname: big\ndescription: Many files. Use in benches.\n---\n');
    for (let i = 1; i < size; i++) {
      const dir = join(skill, 'data', String(i % 100));
      mkdirSync(dir, { recursive: true });
      writeFileSync(join(dir, `f${i}.txt`), `file ${i}\n`);
    }
    git(origin, 'add', '-A');
    git(origin, 'commit', '--quiet', '-m', 'files');
    const source = {
      git: `file://${origin}`,
      ref: git(origin, 'rev-parse', 'HEAD'),
      path: 'skills',
      allow_moving_ref: false,
      max_bytes: 512 * 1024 * 1024,
      max_files: 100_000,
    };
    const checkout = checkoutDir(join(work, `state-${size}`, 'sources'), source.git);
    fetchGitSource(source, checkout, env);
    const cache = createCheckCache?.();
    const check = () => {
      const st = checkGitSource(source, checkout, env, cache);
      if (st.state !== 'ok') throw new Error(`check failed: ${JSON.stringify(st)}`);
    };
    let t = performance.now();
    check();
    const first = performance.now() - t;
    // The server's first call comes seconds after the start; a cache refuses files changed in the last two seconds.
    await new Promise((r) => setTimeout(r, 2100));
    check();
    const calls = [];
    for (let i = 0; i < CALLS; i++) {
      t = performance.now();
      check();
      calls.push(performance.now() - t);
    }
    const load = os.loadavg()[0];
    rows.push([size, round(first), round(median(calls), 2), round(percentile(calls, 95), 2), round(load, 2)]);
    results.push({ files: size, first_ms: first, calls_ms: calls, loadavg_1m: load });
  }
} finally {
  rmSync(work, { recursive: true, force: true });
}
table(rows);
mkdirSync(join(here, 'results'), { recursive: true });
writeFileSync(
  join(here, 'results', 'git-check.json'),
  `${JSON.stringify({ cached: createCheckCache !== undefined, calls: CALLS, results }, null, 2)}\n`,
);
