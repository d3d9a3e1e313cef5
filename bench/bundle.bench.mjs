// Cost of running from the verified, content-addressed copy of a skill ("npm run bench bundle").
//
// Before a run the server used to re-hash the live skill folder; now it takes the read-only copy of the approved
// bundle from <data dir>/bundles/<bundle_sha256>/ (made and verified on the bundle's first call, held while the run
// lasts, reused after). Measured in one process:
//   1. the warm gated call step, interleaved: before (re-hash the bundled csv-stats skill) against now (take and
//      release the held copy); medians of the same run;
//   2. the first call of a new bundle: copying and verifying a 5,000-file skill, off the event loop, with the
//      longest the event loop went without a turn meanwhile.
// Prints both clearly and writes bench/results/bundle.json. Needs a built dist/.
// SKILLS_MCP_BENCH_RUNS or BENCH_RUNS: warm samples (default 200).
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import process from 'node:process';
import { fileURLToPath } from 'node:url';
import { hashBundle } from '../dist/skills/bundle-hash.js';
import { createBundleStore } from '../dist/skills/bundle-store.js';
import { removeTree } from '../dist/envs/env-store.js';

const here = dirname(fileURLToPath(import.meta.url));
const repo = resolve(here, '..');
const RUNS = Number(process.env.SKILLS_MCP_BENCH_RUNS ?? process.env.BENCH_RUNS ?? 200);
const FILES = 5000;
const TARGET_MS = 2;

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const timeAsync = async (fn) => {
  const t0 = performance.now();
  await fn();
  return performance.now() - t0;
};

/** Runs `fn` while measuring the longest gap between event-loop turns. */
async function withLoopWatch(fn) {
  let last = performance.now();
  let longest = 0;
  let turns = 0;
  let on = true;
  const tick = () => {
    const t = performance.now();
    longest = Math.max(longest, t - last);
    last = t;
    turns++;
    if (on) setImmediate(tick);
  };
  setImmediate(tick);
  try {
    return { value: await fn(), longestGapMs: () => longest, turns: () => turns };
  } finally {
    on = false;
  }
}

const tmp = mkdtempSync(join(os.tmpdir(), 'skills-mcp-bench-bundle-'));
try {
  // 1. Warm gated call step.
  const skill = join(repo, 'skills', 'csv-stats');
  const store = createBundleStore(join(tmp, 'bundles'));
  const { sha256 } = hashBundle(skill);
  const firstSmall = await store.materialize(skill, sha256);
  firstSmall.release();
  const before = [];
  const now = [];
  for (let i = 0; i < RUNS; i++) {
    before.push(await timeAsync(() => hashBundle(skill)));
    now.push(
      await timeAsync(async () => {
        const copy = await store.materialize(skill, sha256);
        copy.release();
      }),
    );
  }

  // 2. A skill at the file limit: SKILL.md and 4,999 small scripts in 50 folders.
  const big = join(tmp, 'big');
  mkdirSync(big);
  writeFileSync(join(big, 'SKILL.md'), '---\nname: big\ndescription: Many files.\n---\n\nBig.\n');
  for (let i = 0; i < FILES - 1; i++) {
    const d = join(big, 'scripts', `d${i % 50}`);
    if (i < 50) mkdirSync(d, { recursive: true });
    writeFileSync(join(d, `f${i}.py`), `# file ${i}\nVALUE = ${i}\n`);
  }
  const bigHashMs = await timeAsync(() => hashBundle(big));
  const bigSha = hashBundle(big).sha256;
  const watched = await withLoopWatch(() => store.materialize(big, bigSha));
  const bigCopy = watched.value;
  bigCopy.release();
  const bigWarm = [];
  for (let i = 0; i < 50; i++)
    bigWarm.push(await timeAsync(async () => (await store.materialize(big, bigSha)).release()));

  const warmBefore = median(before);
  const warmNow = median(now);
  const delta = warmNow - warmBefore;
  const rows = [
    ['warm gated call step, before: re-hash the live csv-stats folder (median)', warmBefore],
    ['warm gated call step, now: take the verified copy (median)', warmNow],
    ['first call of csv-stats: copy + verify', firstSmall.copiedMs ?? 0],
    [`first call of a ${FILES}-file skill: copy + verify`, bigCopy.copiedMs ?? 0],
    [`  longest event-loop stall during that copy`, watched.longestGapMs()],
    [`hash of the ${FILES}-file skill (at binding, before and now)`, bigHashMs],
    [`warm step, now, ${FILES}-file skill (median of 50)`, median(bigWarm)],
  ];
  const line = (name, ms) => `${name.padEnd(76)}${ms.toFixed(3).padStart(10)} ms\n`;
  process.stdout.write(
    `bundle copies: ${RUNS} interleaved warm samples, load average ${os.loadavg()[0].toFixed(2)}\n\n`,
  );
  for (const [name, ms] of rows) process.stdout.write(line(name, ms));
  process.stdout.write(
    `\nWARM: now − before = ${delta.toFixed(3)} ms median (target ≤ ${TARGET_MS} ms more): ${delta <= TARGET_MS ? 'MET' : 'MISSED'}\n` +
      `FIRST CALL, ${FILES} files: copy + verify ${(bigCopy.copiedMs ?? 0).toFixed(1)} ms; ` +
      `the event loop turned ${watched.turns()} times meanwhile, longest gap ${watched.longestGapMs().toFixed(1)} ms\n`,
  );
  mkdirSync(join(here, 'results'), { recursive: true });
  writeFileSync(
    join(here, 'results', 'bundle.json'),
    `${JSON.stringify(
      {
        machine: `${os.cpus()[0]?.model ?? 'unknown'} × ${os.cpus().length}, ${process.platform} ${os.release()}, node ${process.version}`,
        date: new Date().toISOString(),
        load_average: os.loadavg(),
        runs: RUNS,
        warm: {
          before_rehash_median_ms: warmBefore,
          now_copy_median_ms: warmNow,
          delta_ms: delta,
          target_ms: TARGET_MS,
          met: delta <= TARGET_MS,
          before_samples_ms: before,
          now_samples_ms: now,
        },
        first_call: {
          files: FILES,
          copy_verify_ms: bigCopy.copiedMs ?? 0,
          event_loop_turns: watched.turns(),
          event_loop_longest_gap_ms: watched.longestGapMs(),
          csv_stats_copy_verify_ms: firstSmall.copiedMs ?? 0,
        },
        rows: Object.fromEntries(rows),
      },
      null,
      2,
    )}\n`,
  );
} finally {
  // Copies are read-only folders: removeTree opens them up first.
  removeTree(tmp);
}
