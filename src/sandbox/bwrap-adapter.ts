import { realpathSync } from 'node:fs';
import { chmod, rmdir, unlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { SkillsError } from '../errors.js';
import type { Logger } from '../log.js';
import { readHostFacts, type HostFacts } from './diagnose-bwrap.js';
import { BWRAP_CANDIDATES } from './find-bwrap.js';
import { applyWorkspaceChanges } from './apply-workspace-changes.js';
import type { WorkspaceChanges } from './types.js';
import { executeBwrap, prestageFor, type ExecuteContext, type ExecuteOutcome } from './bwrap-execute.js';
import { isUnder } from './host-layout.js';
import { copyWorkspace, releaseWorkspaceCopy } from './copy-workspace.js';
import { createKeeper } from './keep-unapplied.js';
import { PROBE_INTERPRETER, PROBE_PLAN, probeBwrap, type BwrapHost } from './bwrap-probe.js';
import { createInterpreterResolver, type InterpreterResolver } from './resolve-interpreter.js';
import type { ChildDeps, SpawnFn } from './run-child.js';
import { buildSeccompFilter } from './seccomp-filter.js';
import type { SandboxAdapter, SandboxResult, SandboxWorkspace } from './types.js';
import { isFolderOpenTo } from './stage-mounts.js';
import { emptyScope } from './collect-binds.js';
import { removeTree } from './remove-tree.js';
import { makeScratchFolder } from './scratch-folders.js';
import { validatePlan } from './validate-plan.js';
import { sandboxDenied } from './sandbox-denied.js';

const notEnded = () =>
  new SkillsError(
    'SANDBOX_FAILED',
    'a process of the run could not be seen to exit; its results are not used',
    {
      hint: 'The run was stopped from outside and its sandbox did not end within 10 s. Check the host for a stuck process.',
    },
  );

const realpathOf = (p: string) => {
  try {
    return realpathSync(p);
  } catch {
    return p;
  }
};

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
  /** Reads what explains a failed probe (default: this host's /proc/sys and container signs). */
  hostFacts?: () => Promise<HostFacts>;
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
  const owner = isRoot ? sandboxId : undefined;
  const arch = o.arch ?? process.arch;
  const resolver = o.resolver ?? createInterpreterResolver(o.env);
  const seccompAvailable = buildSeccompFilter(arch, { allowSpawn: true }) !== undefined;
  const deps: ChildDeps = {
    ...(o.spawn === undefined ? {} : { spawn: o.spawn }),
    ...(o.now === undefined ? {} : { now: o.now }),
  };
  let hostPromise: Promise<BwrapHost> | undefined;
  let stageDir: Promise<string> | undefined;
  let emptyDir: Promise<string> | undefined;
  let disposed = false;

  /**
   * A run that writes the workspace works on a private copy. So does one that reads a workspace folder the sandbox
   * user may not open (a root server's mode-700 project): the copy, owned by that user, holds what it could read of
   * the workspace were the folder open to it.
   */
  const needsCopy = (w: SandboxWorkspace | undefined): w is SandboxWorkspace =>
    w !== undefined && (w.write || (isRoot && !isFolderOpenTo(w.path, sandboxId.uid, sandboxId.gid)));

  const ctx: ExecuteContext = {
    isRoot,
    sandboxId,
    arch,
    deps,
    log: o.log,
    stageDir: ensureStageDir,
    emptyDir: ensureEmptyDir,
  };

  async function ensureStageDir(): Promise<string> {
    stageDir ??= makeScratchFolder(tmpdir(), 'skills-mcp-stage-').then(async (d) => {
      await chmod(d, 0o755);
      return d;
    });
    return stageDir;
  }

  async function ensureEmptyDir(): Promise<string> {
    emptyDir ??= makeScratchFolder(tmpdir(), 'skills-mcp-empty-', emptyScope).then(async (d) => {
      await chmod(d, 0o555);
      await writeFile(emptyScope(d), '{}\n', { mode: 0o444, flag: 'wx' });
      return d;
    });
    return emptyDir;
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
      hostFacts: o.hostFacts ?? (() => readHostFacts()),
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
      const ws = needsCopy(plan.workspace)
        ? await copyWorkspace(plan.workspace.path, owner, sandboxId, plan.workspace.hide)
        : undefined;
      let r: ExecuteOutcome | undefined;
      let workspace: WorkspaceChanges | undefined;
      try {
        r = await executeBwrap(ctx, h, plan, interp, opts, ws);
        if (!r.ended) throw notEnded();
        // Every process of the run is gone: the copy no longer changes. A run that failed applies nothing unless
        // the operator opted in; what it wrote is kept among the call's files.
        const o = r.outcome;
        const failed = o.exitCode !== 0 || o.signal !== null || o.timedOut || o.cancelled || r.oomKilled;
        const keep =
          failed && plan.workspace?.keepIn !== undefined ? createKeeper(plan.workspace.keepIn) : undefined;
        if (ws !== undefined && plan.workspace?.write === true)
          workspace = await applyWorkspaceChanges(ws, isRoot, plan.workspace.protect, {
            apply: !failed || plan.workspace.applyFailed === true,
            ...(keep === undefined ? {} : { keep }),
          }).catch((cause: unknown) => {
            throw new SkillsError('SANDBOX_FAILED', 'could not apply the workspace changes of the run', {
              cause,
            });
          });
      } finally {
        if (ws !== undefined) releaseWorkspaceCopy(ws);
        await ws?.worker.done().catch((err: unknown) => o.log.warn({ err }, 'the workspace worker failed'));
        // A folder a live process can still swap for a link is never walked: it is left behind instead.
        if (ws !== undefined && r?.ended !== false)
          await removeTree(ws.dir).catch((err: unknown) =>
            o.log.warn({ err, dir: ws.dir }, 'could not remove a workspace copy'),
          );
        else if (ws !== undefined)
          o.log.warn({ dir: ws.dir }, 'workspace copy left in place: a process of the run may remain');
      }
      if (workspace !== undefined && workspace.refused.length > 0)
        o.log.warn({ refused: workspace.refused.length }, 'workspace changes refused');
      return {
        ...r.outcome,
        ...(workspace === undefined ? {} : { workspace }),
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
    async prestage(hints) {
      const h = await host();
      if (!h.probe.healthy || disposed) return;
      const found = await Promise.all(
        hints.interpreters.map((n) => resolver.resolve(n).catch(() => undefined)),
      );
      const mounts = found
        .flatMap((i) => i?.mounts ?? [])
        .filter((m) => !isUnder(m, h.layout.systemDirs))
        .map((m) => ({ src: realpathOf(m), write: false }));
      await prestageFor(ctx, h, [...mounts, ...hints.sources]);
    },
    async dispose() {
      if (disposed) return;
      disposed = true;
      const h = await hostPromise?.catch(() => undefined);
      await h?.launchers?.dispose();
      await h?.pool?.dispose();
      const d = await stageDir?.catch(() => undefined);
      if (d !== undefined) await rmdir(d).catch(() => undefined);
      const e = await emptyDir?.catch(() => undefined);
      if (e !== undefined) await rmdir(e).catch(() => undefined);
      if (e !== undefined) await unlink(emptyScope(e)).catch(() => undefined);
    },
  };
}
