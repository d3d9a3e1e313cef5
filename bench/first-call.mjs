// The runs bench's first-call case: a new server's first gated call against its warm ones. Each spawn (fresh state
// folder, so nothing is cached on disk either) connects, lists the tools, waits THINK_MS as a client does before
// its first call, then times the first csv-stats call and WARM more. Wall time is the client's; CPU is the server
// process's (with the children it reaped) over the call, from /proc/<pid>/stat. With BENCH_BASELINE_CLI (another
// build's cli.js) the same spawns run against that build too, interleaved, so before and after share the load.
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import process from 'node:process';
import { setTimeout as sleep } from 'node:timers/promises';
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport, getDefaultEnvironment } from '@modelcontextprotocol/client/stdio';
import { removeTree } from '../dist/envs/env-store.js';
import { median, out, round, table } from './support.mjs';

const THINK_MS = 1000;
const SETTLE_MS = 100;
const WARM = 5;
const TICK_MS = 1000 / 100; // USER_HZ

/** utime + stime + cutime + cstime of `pid`, in ms. */
const cpuOf = (pid) => {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14])) * TICK_MS;
};

async function oneSpawn(cli, repo, args) {
  const tmp = mkdtempSync(join(os.tmpdir(), 'skills-mcp-bench-first-'));
  try {
    const config = join(tmp, 'skills-mcp.yaml');
    writeFileSync(config, 'approval:\n  mode: allow\n  fallback: rules-only\n');
    mkdirSync(join(tmp, 'state'));
    const client = new Client({ name: 'bench', version: '1' }, { capabilities: {} });
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [
        cli,
        '--skills',
        join(repo, 'skills'),
        '--config',
        config,
        '--audit',
        join(tmp, 'state', 'audit.db'),
      ].concat(['--no-watch', '--log-level', 'warn']),
      env: getDefaultEnvironment(),
      stderr: 'inherit',
    });
    await client.connect(transport);
    await client.listTools();
    await sleep(THINK_MS);
    const call = async () => {
      const c0 = cpuOf(transport.pid);
      const t0 = performance.now();
      const r = await client.callTool({ name: 'csv-stats', arguments: args });
      const wall = performance.now() - t0;
      if (r.isError) throw new Error(`server run failed: ${r.content[0]?.text}`);
      return { wall, cpu: cpuOf(transport.pid) - c0 };
    };
    const first = await call();
    const warm = [];
    for (let i = 0; i < WARM; i++) {
      await sleep(SETTLE_MS);
      warm.push(await call());
    }
    await client.close();
    const w = { wall: median(warm.map((x) => x.wall)), cpu: median(warm.map((x) => x.cpu)) };
    return {
      first,
      warm: w,
      ratio: { wall: first.wall / w.wall, cpu: w.cpu > 0 ? first.cpu / w.cpu : null },
    };
  } finally {
    removeTree(tmp);
  }
}

/** Runs the case; returns what runs.json keeps of it. */
export async function firstCall({ repo, cli, baselineCli, spawns, args }) {
  const builds = [{ name: 'this build', cli }].concat(
    baselineCli === undefined ? [] : [{ name: 'baseline (BENCH_BASELINE_CLI)', cli: baselineCli }],
  );
  const samples = Object.fromEntries(builds.map((b) => [b.name, []]));
  for (let i = 0; i < spawns; i++)
    for (const b of i % 2 === 0 ? builds : [...builds].reverse())
      samples[b.name].push(await oneSpawn(b.cli, repo, args));
  const rows = [
    [
      'first gated call (median of spawns)',
      'spawns',
      'first ms',
      'warm ms',
      'first÷warm wall',
      'first CPU ms',
      'warm CPU ms',
      'first÷warm CPU',
    ],
  ];
  const summary = {};
  for (const b of builds) {
    const s = samples[b.name];
    const m = {
      firstWall: median(s.map((x) => x.first.wall)),
      warmWall: median(s.map((x) => x.warm.wall)),
      ratioWall: median(s.map((x) => x.ratio.wall)),
      firstCpu: median(s.map((x) => x.first.cpu)),
      warmCpu: median(s.map((x) => x.warm.cpu)),
      ratioCpu: median(s.map((x) => x.ratio.cpu)),
    };
    summary[b.name] = m;
    rows.push([
      b.name,
      s.length,
      round(m.firstWall),
      round(m.warmWall),
      round(m.ratioWall, 2),
      round(m.firstCpu),
      round(m.warmCpu),
      round(m.ratioCpu, 2),
    ]);
  }
  out();
  table(rows);
  const r = summary['this build'].ratioWall;
  out(
    `\nfirst÷warm wall ${r.toFixed(2)} (target ≤ 1.5): ${r <= 1.5 ? 'MET' : 'MISSED'}; load ${os
      .loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}`,
  );
  return { thinkMs: THINK_MS, warmCalls: WARM, loadavg: os.loadavg(), summary, samples };
}
