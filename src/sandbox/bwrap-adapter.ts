import { chmod, mkdtemp, rmdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SkillsError } from '../errors.js';
import type { Logger } from '../log.js';
import { BWRAP_CANDIDATES } from './find-bwrap.js';
import { executeBwrap, type ExecuteContext } from './bwrap-execute.js';
import { PROBE_INTERPRETER, PROBE_PLAN, probeBwrap, type BwrapHost } from './bwrap-probe.js';
import { createInterpreterResolver, type InterpreterResolver } from './resolve-interpreter.js';
import type { ChildDeps, SpawnFn } from './run-child.js';
import { buildSeccompFilter } from './seccomp-filter.js';
import type { SandboxAdapter, SandboxResult } from './types.js';
import { validatePlan } from './validate-plan.js';
import { sandboxDenied } from './sandbox-denied.js';

export interface BwrapAdapterOptions {
  log: Logger;
  /** The server's environment: PATH (and pyenv/nvm variables) for interpreter lookup only. */
  env: NodeJS.ProcessEnv;
  /** Absolute paths where bwrap may be. Default: `/usr/bin/bwrap`, `/usr/local/bin/bwrap`. */
  bwrapCandidates?: readonly string[];
  /** Identity of the server (default: this process). */
  uid?: number;
  gid?: number;
  /** Node `process.arch` naming; selects the seccomp syscall table. */
  arch?: string;
  /** Use cgroups for memory and pids when available (default true). */
  useCgroups?: boolean;
  resolver?: InterpreterResolver;
  spawn?: SpawnFn;
  /** Monotonic ms clock for durations. */
  now?: () => number;
  clock?: () => Date;
}

/**
 * The Linux adapter: the recipe of notes/sandbox-linux.md (`bwrap-args.ts`), run through pre-spawned
 * launchers (`launcher.ts`), with cgroups where available. Probes once; re-probes after a failure.
 */
export function createBwrapAdapter(o: BwrapAdapterOptions): SandboxAdapter {
  const uid = o.uid ?? process.getuid?.() ?? 0;
  const gid = o.gid ?? process.getgid?.() ?? 0;
  const isRoot = uid === 0;
  const sandboxId = isRoot ? { uid: 65534, gid: 65534 } : { uid, gid };
  const arch = o.arch ?? process.arch;
  const resolver = o.resolver ?? createInterpreterResolver(o.env);
  const seccompAvailable = buildSeccompFilter(arch, { allowSpawn: true }) !== undefined;
  const deps: ChildDeps = {
    ...(o.spawn === undefined ? {} : { spawn: o.spawn }),
    ...(o.now === undefined ? {} : { now: o.now }),
  };
  let hostPromise: Promise<BwrapHost> | undefined;
  let stageDir: Promise<string> | undefined;
  let disposed = false;

  const ctx: ExecuteContext = { isRoot, sandboxId, arch, deps, log: o.log, stageDir: ensureStageDir };

  async function ensureStageDir(): Promise<string> {
    stageDir ??= mkdtemp(join(tmpdir(), 'skills-mcp-stage-')).then(async (d) => {
      await chmod(d, 0o755);
      return d;
    });
    return stageDir;
  }

  async function host(): Promise<BwrapHost> {
    if (disposed) throw new SkillsError('SANDBOX_FAILED', 'sandbox adapter was disposed');
    const current = hostPromise;
    if (current !== undefined) {
      const h = await current;
      if (h.probe.healthy) return h;
    }
    const next = probeBwrap({
      candidates: o.bwrapCandidates ?? BWRAP_CANDIDATES,
      uid,
      log: o.log,
      useCgroups: o.useCgroups ?? true,
      seccomp: seccompAvailable,
      now: o.clock ?? (() => new Date()),
      tryRun: async (h) => {
        const r = await executeBwrap(ctx, h, PROBE_PLAN, PROBE_INTERPRETER, {});
        return { exitCode: r.outcome.exitCode, stderr: r.outcome.stderr.toString('utf8') };
      },
    });
    hostPromise = next;
    const h = await next;
    o.log.info(
      { healthy: h.probe.healthy, code: h.probe.diagnosis.code, limits: h.probe.limits },
      'sandbox probed',
    );
    return h;
  }

  return {
    name: 'bwrap',
    async probe() {
      return (await host()).probe;
    },
    async run(plan, opts = {}): Promise<SandboxResult> {
      validatePlan(plan);
      const h = await host();
      if (!h.probe.healthy) throw sandboxDenied(h.probe);
      const interp = await resolver.resolve(plan.argv[0]!);
      const r = await executeBwrap(ctx, h, plan, interp, opts);
      return {
        ...r.outcome,
        oomKilled: r.oomKilled,
        evidence: {
          requested: plan.sandbox ?? 'required',
          effective: 'enforced',
          adapter: 'bwrap',
          active: true,
          profile: plan.profile,
          network: plan.network,
          seccomp: r.seccomp,
          limits: {
            wall: plan.limits.wallTimeMs,
            cpu: plan.limits.cpuSeconds,
            memory: r.cgroup ? 'cgroup' : 'rlimit-best-effort',
            pids: r.cgroup ? 'cgroup' : 'rlimit',
          },
        },
      };
    },
    async dispose() {
      if (disposed) return;
      disposed = true;
      const h = await hostPromise?.catch(() => undefined);
      await h?.launchers?.dispose();
      await h?.pool?.dispose();
      const d = await stageDir?.catch(() => undefined);
      if (d !== undefined) await rmdir(d).catch(() => undefined);
    },
  };
}
