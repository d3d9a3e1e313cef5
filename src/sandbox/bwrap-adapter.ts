import { chmod, mkdtemp, open, rmdir, type FileHandle } from 'node:fs/promises';
import { constants, tmpdir } from 'node:os';
import { join } from 'node:path';
import { SkillsError } from '../errors.js';
import type { Logger } from '../log.js';
import { bwrapArgs, groupFile, passwdFile, SANDBOX_HOSTS } from './bwrap-args.js';
import { BWRAP_CANDIDATES } from './find-bwrap.js';
import { collectBinds } from './collect-binds.js';
import { launchSpec } from './launch-spec.js';
import { probeBwrap, type BwrapHost } from './bwrap-probe.js';
import { createInterpreterResolver, type InterpreterResolver, type ResolvedInterpreter } from './resolve-interpreter.js';
import { runChild, type ChildOutcome, type SpawnFn } from './run-child.js';
import { buildSeccompFilter } from './seccomp-filter.js';
import { shimArgv } from './shim.js';
import { isReachableBy, stageBinds } from './stage-mounts.js';
import type { RunOptions, SandboxAdapter, SandboxPlan, SandboxResult } from './types.js';
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

/** Processes the sandbox itself adds to a run's cgroup (sh/bwrap, bwrap's init, a stager and setpriv). */
const HELPER_PIDS = 8;
const SANDBOX_PATH = '/usr/local/bin:/usr/bin:/bin';

const SIGNAL_NAMES = new Map(Object.entries(constants.signals).map(([name, n]) => [n, name as NodeJS.Signals]));

/**
 * bwrap reports a payload killed by signal N as exit code 128 + N; report it as the signal. (A script that
 * itself exits with 129–192 reads the same way, as it would in a shell.)
 */
function decodeSignal(o: ChildOutcome): ChildOutcome {
  const sig = o.exitCode !== null && o.exitCode > 128 ? SIGNAL_NAMES.get(o.exitCode - 128) : undefined;
  return sig === undefined || o.signal !== null ? o : { ...o, exitCode: null, signal: sig };
}

/** The Linux adapter: the recipe of notes/sandbox-linux.md (see `bwrap-args.ts`, `launch-spec.ts`). */
export function createBwrapAdapter(o: BwrapAdapterOptions): SandboxAdapter {
  const uid = o.uid ?? process.getuid?.() ?? 0;
  const gid = o.gid ?? process.getgid?.() ?? 0;
  const isRoot = uid === 0;
  const sandboxId = isRoot ? { uid: 65534, gid: 65534 } : { uid, gid };
  const arch = o.arch ?? process.arch;
  const resolver = o.resolver ?? createInterpreterResolver(o.env);
  const seccompAvailable = buildSeccompFilter(arch, { allowSpawn: true }) !== undefined;
  let hostPromise: Promise<BwrapHost> | undefined;
  let stageDir: Promise<string> | undefined;
  let disposed = false;

  async function ensureStageDir(): Promise<string> {
    stageDir ??= mkdtemp(join(tmpdir(), 'skills-mcp-stage-')).then(async (d) => {
      await chmod(d, 0o755);
      return d;
    });
    return stageDir;
  }

  async function execute(host: BwrapHost, plan: SandboxPlan, interp: ResolvedInterpreter, opts: RunOptions) {
    const bwrap = host.bwrap;
    if (bwrap === undefined) throw sandboxDenied(host.probe);
    const binds = await collectBinds(plan, interp, host.layout.systemDirs);
    let stage: { dir: string; outer: typeof binds; setpriv: string } | undefined;
    let inner = binds;
    if (isRoot) {
      const unreachable = new Set<string>();
      for (const b of binds) if (!(await isReachableBy(b.src, sandboxId.uid, sandboxId.gid))) unreachable.add(b.src);
      if (unreachable.size > 0) {
        if (host.setpriv === undefined) {
          throw new SkillsError('SANDBOX_FAILED', 'a mount source is not readable by the sandbox user', {
            hint: 'Install util-linux (setpriv), or make the path world-readable.',
          });
        }
        const dir = await ensureStageDir();
        const staged = stageBinds(binds, unreachable, dir);
        inner = staged.inner;
        stage = { dir, outer: staged.outer, setpriv: host.setpriv };
      }
    }
    const lease = await host.pool?.take();
    const handles: FileHandle[] = [];
    try {
      if (lease !== undefined) {
        await lease.setLimits(plan.limits.memoryMiB * 1024 * 1024, plan.limits.pids + HELPER_PIDS);
        for (const f of lease.procsFiles) handles.push(await open(f, 'w'));
      }
      const cgroupFds = handles.map((h) => h.fd);
      const seccomp = buildSeccompFilter(arch, { allowSpawn: plan.limits.allowSpawn });
      const env = { HOME: '/tmp', TMPDIR: '/tmp', ...plan.env, PATH: `${interp.binDir}:${SANDBOX_PATH}` };
      const spec = launchSpec({
        bwrap,
        options: (fds) =>
          bwrapArgs({
            layout: host.layout,
            network: plan.network,
            binds: inner,
            tmpfsBytes: plan.limits.tmpfsMiB * 1024 * 1024,
            cwd: plan.cwd,
            env,
            fds,
          }),
        payload: shimArgv(
          {
            openFiles: plan.limits.openFiles,
            cpuSeconds: plan.limits.cpuSeconds,
            fileSizeMiB: plan.limits.fileSizeMiB,
            ...(lease === undefined ? { dataMiB: plan.limits.memoryMiB, processes: plan.limits.pids } : {}),
          },
          [interp.command, ...plan.argv.slice(1)],
        ),
        files: {
          passwd: passwdFile(sandboxId.uid, sandboxId.gid),
          group: groupFile(sandboxId.gid),
          ...(plan.network === 'none' ? { hosts: SANDBOX_HOSTS } : {}),
        },
        ...(seccomp === undefined ? {} : { seccomp }),
        ...(cgroupFds.length === 0 ? {} : { cgroupFds: [cgroupFds[0]!, cgroupFds.at(-1)!] as [number, number] }),
        ...(stage === undefined ? {} : { stage }),
        ...(isRoot ? { dropTo: sandboxId } : {}),
      });
      const outcome = await runChild(
        {
          command: spec.command,
          args: spec.args,
          env: {},
          extraFds: spec.extraFds,
          ...(spec.uid === undefined ? {} : { uid: spec.uid, gid: spec.gid ?? spec.uid }),
          ...(plan.stdin === undefined ? {} : { stdin: plan.stdin }),
          wallTimeMs: plan.limits.wallTimeMs,
          maxOutputBytes: plan.limits.maxOutputBytes,
          ...(opts.signal === undefined ? {} : { signal: opts.signal }),
          ...(opts.onOutput === undefined ? {} : { onOutput: opts.onOutput }),
        },
        { ...(o.spawn === undefined ? {} : { spawn: o.spawn }), ...(o.now === undefined ? {} : { now: o.now }) },
      );
      const oomKilled = lease === undefined ? false : await lease.oomKilled();
      return { outcome: decodeSignal(outcome), oomKilled, seccomp: seccomp !== undefined, cgroup: lease !== undefined };
    } finally {
      for (const h of handles) await h.close().catch(() => undefined);
      // The tree is already gone ('close' means bwrap's init closed its stdio); removal can trail.
      if (lease !== undefined) void lease.release();
    }
  }

  const TRUE_PLAN: SandboxPlan = {
    argv: ['/bin/true'],
    cwd: '/tmp',
    env: {},
    readOnlyPaths: [],
    writablePaths: [],
    network: 'none',
    profile: 'probe',
    limits: {
      wallTimeMs: 15_000,
      cpuSeconds: 5,
      memoryMiB: 64,
      pids: 16,
      tmpfsMiB: 1,
      fileSizeMiB: 1,
      maxOutputBytes: 16_384,
      openFiles: 64,
      allowSpawn: false,
    },
  };
  const TRUE_INTERP: ResolvedInterpreter = { command: '/bin/true', mounts: [], binDir: '/usr/bin', source: 'probe' };

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
        const r = await execute(h, TRUE_PLAN, TRUE_INTERP, {});
        return { exitCode: r.outcome.exitCode, stderr: r.outcome.stderr.toString('utf8') };
      },
    });
    hostPromise = next;
    const h = await next;
    o.log.info({ healthy: h.probe.healthy, code: h.probe.diagnosis.code, limits: h.probe.limits }, 'sandbox probed');
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
      const r = await execute(h, plan, interp, opts);
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
      await h?.pool?.dispose();
      const d = await stageDir?.catch(() => undefined);
      if (d !== undefined) await rmdir(d).catch(() => undefined);
    },
  };
}
