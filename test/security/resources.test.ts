import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe } from 'vitest';
import type { SandboxResult } from '../../src/sandbox/types.js';
import {
  bestEffort,
  blocked,
  blockedIf,
  breach,
  securitySuite,
  type CaseContext,
} from './harness/security-case.js';

const { securityCase, securityControl } = securitySuite();
const MiB = 1024 * 1024;

const size = async (p: string) => (await stat(p).catch(() => ({ size: -1 }))).size;
/** The heartbeat file stopped growing (sampled over a generous interval; not a timing assertion). */
async function stopped(p: string): Promise<boolean> {
  const a = await size(p);
  await sleep(600);
  return a > 0 && (await size(p)) === a;
}

/** Last progress number the probe printed (MiB reached), and its final JSON line if any. */
function progress(r: SandboxResult): { mb: number; json?: Record<string, unknown> } {
  const lines = r.stdout.toString().trim().split('\n');
  const last = lines.at(-1) ?? '';
  if (last.startsWith('{'))
    return {
      mb: Number((JSON.parse(last) as { mb?: number }).mb ?? 0),
      json: JSON.parse(last) as Record<string, unknown>,
    };
  return { mb: Number(last) || 0 };
}

async function daemonCase(ctx: CaseContext, mode: 'hang' | 'exit' | 'cancel') {
  const out = await ctx.out();
  const beat = join(out, 'beat');
  const ac = new AbortController();
  const r = await ctx.run(
    'daemon',
    { beat, hang: mode !== 'exit' },
    {
      plan: { writablePaths: [out], limits: { wallTimeMs: mode === 'hang' ? 1500 : 20_000 } },
      run:
        mode === 'cancel' ? { signal: ac.signal, onOutput: (c) => c.stream === 'stdout' && ac.abort() } : {},
    },
  );
  if (!r.stdout.toString().startsWith('started'))
    throw new Error(`daemon probe did not start: ${r.stderr.toString()}`);
  return { r, quiet: await stopped(beat) };
}

describe('resources', () => {
  securityControl(
    { id: 'res-control', category: 'resources', title: 'a short script finishes normally under the limits' },
    async (ctx) => {
      const r = await ctx.run('hello');
      return r.exitCode === 0 && !r.timedOut && !r.truncated.stdout;
    },
  );

  securityCase(
    { id: 'res-wall-clock', category: 'resources', title: 'hang past the wall-clock limit (with a daemon)' },
    async (ctx) => {
      const { r, quiet } = await daemonCase(ctx, 'hang');
      return blockedIf(
        r.timedOut && quiet,
        `timedOut=${r.timedOut}, whole tree gone (SIGKILL of bwrap; pid namespace)`,
      );
    },
  );

  securityCase(
    { id: 'res-daemon', category: 'resources', title: 'a double-forked setsid daemon outlives its script' },
    async (ctx) => {
      const { r, quiet } = await daemonCase(ctx, 'exit');
      return blockedIf(r.exitCode === 0 && quiet, 'the daemon dies with the run (pid namespace torn down)');
    },
  );

  securityCase(
    { id: 'res-cancel', category: 'resources', title: 'cancellation kills the tree' },
    async (ctx) => {
      const { r, quiet } = await daemonCase(ctx, 'cancel');
      return blockedIf(r.cancelled && quiet, 'AbortSignal → SIGKILL of the process group');
    },
  );

  securityCase(
    { id: 'res-cpu-burn', category: 'resources', title: 'burn CPU past cpuSeconds' },
    async (ctx) => {
      const r = await ctx.run('cpu_burn', {}, { plan: { limits: { cpuSeconds: 1, wallTimeMs: 30_000 } } });
      return blockedIf(
        !r.timedOut && (r.signal === 'SIGKILL' || r.signal === 'SIGXCPU'),
        `killed by ${r.signal} (RLIMIT_CPU) before the wall clock`,
      );
    },
  );

  securityCase(
    { id: 'res-heap-bomb', category: 'resources', title: 'allocate heap past memoryMiB' },
    async (ctx) => {
      const r = await ctx.run('heap', { cap_mb: 1024 }, { plan: { limits: { memoryMiB: 128 } } });
      const p = progress(r);
      const how = r.oomKilled
        ? 'OOM-killed in its cgroup'
        : p.json?.stopped === 'MemoryError'
          ? 'MemoryError (RLIMIT_DATA)'
          : `signal ${r.signal}`;
      return p.mb <= 128 + 32 && p.json?.stopped !== 'cap'
        ? blocked(`stopped at ${p.mb} MiB of 128: ${how}`)
        : breach(`reached ${p.mb} MiB`);
    },
  );

  for (const kind of ['memfd', 'mmap'] as const) {
    securityCase(
      {
        id: `res-offheap-${kind}`,
        category: 'resources',
        title: `grow ${kind === 'memfd' ? 'a memfd' : 'shared anonymous mmap'} past memoryMiB`,
      },
      async (ctx) => {
        const cap = 320; // safety cap: at most 320 MiB of host RAM even with no memory limit at all
        const r = await ctx.run('offheap', { kind, cap_mb: cap }, { plan: { limits: { memoryMiB: 128 } } });
        const p = progress(r);
        if (p.mb <= 128 + 32)
          return blocked(
            `stopped at ${p.mb} MiB of 128 (${r.oomKilled ? 'OOM-killed in its cgroup' : JSON.stringify(p.json?.stopped ?? r.signal)})`,
          );
        return ctx.h.probeResult.limits.memory === 'cgroup'
          ? breach(`reached ${p.mb} MiB despite the cgroup`)
          : bestEffort(
              `reached the ${cap} MiB safety cap: without cgroups shared memory is not limited (RLIMIT_DATA counts only private memory)`,
            );
      },
    );
  }

  securityCase(
    { id: 'res-fork-bomb', category: 'resources', title: 'fork until the process limit' },
    async (ctx) => {
      const r = await ctx.run('fork_bomb', { cap: 400 }, { plan: { limits: { pids: 32 } } });
      const json = progress(r).json as { forked?: number; errno?: number } | undefined;
      const n = json?.forked ?? -1;
      const layer =
        ctx.h.probeResult.limits.pids === 'cgroup'
          ? 'cgroup pids.max'
          : 'RLIMIT_NPROC in its own user namespace';
      return blockedIf(
        n >= 0 && n <= 40 && json?.errno === 11,
        `fork failed (EAGAIN) after ${n} children: ${layer}`,
      );
    },
  );

  securityCase({ id: 'res-output-flood', category: 'resources', title: '200 MB to stdout' }, async (ctx) => {
    const before = process.memoryUsage().arrayBuffers;
    let peak = before;
    const r = await ctx.run(
      'flood',
      { mb: 200 },
      {
        plan: { limits: { maxOutputBytes: MiB } },
        run: { onOutput: () => (peak = Math.max(peak, process.memoryUsage().arrayBuffers)) },
      },
    );
    const grew = Math.round((peak - before) / MiB);
    return blockedIf(
      r.truncated.stdout && r.stdout.length < MiB + 200 && r.bytes.stdout === 200 * MiB && grew < 100,
      `kept 1 MiB + marker of ${r.bytes.stdout / MiB} MiB; server buffers grew ${grew} MiB at peak`,
    );
  });
});
