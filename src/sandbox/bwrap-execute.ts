import { existsSync } from 'node:fs';
import { constants } from 'node:os';
import { join } from 'node:path';
import type { Logger } from '../log.js';
import { bwrapArgs, groupFile, passwdFile, SANDBOX_HOSTS, type Bind } from './bwrap-args.js';
import type { BwrapHost } from './bwrap-probe.js';
import { collectBinds } from './collect-binds.js';
import type { WorkspaceCopy } from './copy-workspace.js';
import { FD, GATE_GO, launchData, START_BYTE, type LaunchInput } from './launcher.js';
import { createLauncherPool, type Launcher, type LauncherPool } from './launcher-pool.js';
import type { ResolvedInterpreter } from './resolve-interpreter.js';
import type { ChildDeps, ChildOutcome } from './run-child.js';
import { sandboxDenied } from './sandbox-denied.js';
import { endSandbox, identifyInit, type SandboxInit } from './sandbox-init.js';
import { buildSeccompFilter } from './seccomp-filter.js';
import { nprocArgv } from './shim.js';
import { isReachableBy, onPreStage, stageBinds, stageRootOf } from './stage-mounts.js';
import type { RunOptions, SandboxPlan } from './types.js';

/** What one bwrap run needs from its adapter. */
export interface ExecuteContext {
  isRoot: boolean;
  /** uid/gid the script runs as on the host (65534 when the server is root). */
  sandboxId: { uid: number; gid: number };
  arch: string;
  deps: ChildDeps;
  log: Logger;
  /** The (lazily created) world-traversable folder staged sources are mounted below. */
  stageDir: () => Promise<string>;
  /** The (lazily created) empty read-only folder mounted over `node_modules` folders above the skill. */
  emptyDir: () => Promise<string>;
}

export interface ExecuteOutcome {
  outcome: ChildOutcome;
  oomKilled: boolean;
  seccomp: boolean;
  cgroup: boolean;
  /**
   * Every process of the sandbox is known to be gone. False only when the run was stopped from outside and its
   * pid 1 could not be seen to exit: what it had writable may still change.
   */
  ended: boolean;
}

/** Processes the sandbox itself adds to a run's cgroup (launcher/bwrap, its three stdio `cat`s, a stager's three). */
const HELPER_PIDS = 10;
const SANDBOX_PATH = '/usr/local/bin:/usr/bin:/bin';

const signalName = (n: number): NodeJS.Signals | undefined =>
  Object.entries(constants.signals).find(([, v]) => v === n)?.[0] as NodeJS.Signals | undefined;

/**
 * bwrap reports a payload killed by signal N as exit code 128 + N; report it as the signal. (A script that
 * itself exits with 129–192 reads the same way, as it would in a shell.)
 */
function decodeSignal(o: ChildOutcome): ChildOutcome {
  const sig = o.exitCode !== null && o.exitCode > 128 ? signalName(o.exitCode - 128) : undefined;
  return sig === undefined || o.signal !== null ? o : { ...o, exitCode: null, signal: sig };
}

/** The outcome of a run cancelled before its launcher had it. */
function unstarted(): ChildOutcome {
  const none = Buffer.alloc(0);
  return {
    exitCode: null,
    signal: null,
    stdout: none,
    stderr: none,
    truncated: { stdout: false, stderr: false },
    bytes: { stdout: 0, stderr: 0 },
    durationMs: 0,
    timedOut: false,
    cancelled: true,
  };
}

interface Chosen {
  launcher: Launcher;
  /** The binds as the sandbox's bwrap sees them. */
  inner: Bind[];
  /** The chain stages first (a root launcher, not pre-staged). */
  stage?: LaunchInput['stage'];
  /** The launcher runs as root and drops to the sandbox user with setpriv. */
  drop: boolean;
}

/**
 * The launcher for a run. Not root: one running as the server. Root: one running as 65534 when that user can reach
 * every source; else a pre-staged one that already mounted them (`stage-mounts.ts`); else a root one whose chain
 * stages them first, and the pool pre-stages their folders for the next call.
 */
async function chooseLauncher(
  ctx: ExecuteContext,
  pool: LauncherPool,
  bwrap: string,
  binds: Bind[],
): Promise<Chosen> {
  const { uid, gid } = ctx.sandboxId;
  if (!ctx.isRoot) return { launcher: await pool.take(undefined), inner: binds, drop: false };
  const unreachable = new Set(binds.filter((b) => !isReachableBy(b.src, uid, gid)).map((b) => b.src));
  if (unreachable.size === 0) return { launcher: await pool.take(ctx.sandboxId), inner: binds, drop: false };
  const prestaged = pool.takeStaged((ps) => onPreStage(binds, unreachable, ps, uid, gid));
  if (prestaged !== undefined) return { launcher: prestaged.launcher, inner: prestaged.value, drop: true };
  const dir = await ctx.stageDir();
  pool.wantStaged(
    bwrap,
    dir,
    stageRoots(
      binds.filter((x) => unreachable.has(x.src)),
      uid,
      gid,
    ),
  );
  const staged = stageBinds(binds, unreachable, dir);
  return {
    launcher: await pool.take(undefined),
    inner: staged.inner,
    stage: { dir, outer: staged.outer },
    drop: true,
  };
}

/** The folders to pre-stage for unreachable sources (folder → writable), as `stageRootOf` picks them. */
function stageRoots(sources: readonly Pick<Bind, 'src' | 'write'>[], uid: number, gid: number) {
  const roots = new Map<string, boolean>();
  for (const b of sources.filter((x) => !isHeldFd(x.src))) {
    const root = stageRootOf(b.src, uid, gid);
    roots.set(root, roots.get(root) === true || b.write);
  }
  return roots;
}

/** The host's launcher pool, made on first need. */
const launchersOf = (ctx: ExecuteContext, host: BwrapHost): LauncherPool =>
  (host.launchers ??= createLauncherPool({
    ...(host.pool === undefined ? {} : { cgroups: host.pool }),
    deps: ctx.deps,
    log: ctx.log,
    initial: ctx.isRoot ? ctx.sandboxId : undefined,
  }));

/**
 * Root only: a launcher pre-staged for runs whose sources are like `sources` (a folder a run binds; `childOf`: some
 * folder right in that one, as a call's own output folder in the runs folder), spawned now rather than after the
 * first such run. Sources the sandbox user can reach need no staging and are left out; a folder that does not exist
 * is left to the run. What the pre-stage holds is only ever used by a run whose binds it covers (`onPreStage`).
 */
export async function prestageFor(
  ctx: ExecuteContext,
  host: BwrapHost,
  sources: readonly { src: string; write: boolean; childOf?: boolean }[],
): Promise<void> {
  if (!ctx.isRoot || host.bwrap === undefined || host.setpriv === undefined || !host.probe.healthy) return;
  const { uid, gid } = ctx.sandboxId;
  const examples = sources
    .filter((s) => existsSync(s.src))
    .map((s) => ({ src: s.childOf === true ? join(s.src, '.a-run-of-its-own') : s.src, write: s.write }))
    .filter((s) => !isReachableBy(s.src, uid, gid));
  const roots = new Map([...stageRoots(examples, uid, gid)].filter(([root]) => existsSync(root)));
  if (roots.size === 0) return;
  const pool = launchersOf(ctx, host);
  pool.wantStaged(host.bwrap, await ctx.stageDir(), roots);
  pool.refill();
}

/**
 * A source that names a folder this process holds (`/proc/<pid>/fd/<fd>`, the workspace's `.git`): staged for its
 * own run only, never pre-staged for later ones, where the fd may be closed or hold another folder.
 */
const isHeldFd = (src: string) => src.startsWith(`/proc/${process.pid}/fd/`);

/** One run through a waiting launcher: mounts, staging, cgroup limits, the launcher's data, the wait. */
export async function executeBwrap(
  ctx: ExecuteContext,
  host: BwrapHost,
  plan: SandboxPlan,
  interp: ResolvedInterpreter,
  opts: RunOptions,
  workspaceCopy?: WorkspaceCopy,
): Promise<ExecuteOutcome> {
  const { isRoot, sandboxId, arch } = ctx;
  const bwrap = host.bwrap;
  if (bwrap === undefined || (isRoot && host.setpriv === undefined)) throw sandboxDenied(host.probe);
  const launchers = launchersOf(ctx, host);
  const binds = collectBinds(plan, interp, host.layout.systemDirs, workspaceCopy, await ctx.emptyDir());
  const chosen = await chooseLauncher(ctx, launchers, bwrap, binds);
  const { launcher, stage, drop } = chosen;
  // A held folder left as is (not staged: the launcher runs as the server) is opened by the launcher for bwrap.
  const held = chosen.inner.filter((b) => isHeldFd(b.src));
  const inner = chosen.inner.map((b) => (isHeldFd(b.src) ? { ...b, fd: FD.held } : b));
  const lease = launcher.lease;
  try {
    if (held.length > 1 || (held.length === 1 && (isRoot || held[0]!.write)))
      throw new Error('a held folder the launcher cannot open for bwrap');
    if (lease !== undefined) {
      await lease.setLimits(plan.limits.memoryMiB * 1024 * 1024, plan.limits.pids + HELPER_PIDS);
    }
    const seccomp = buildSeccompFilter(arch, { allowSpawn: plan.limits.allowSpawn });
    const env = { HOME: '/tmp', TMPDIR: '/tmp', ...plan.env, PATH: `${interp.binDir}:${SANDBOX_PATH}` };
    const script = [interp.command, ...plan.argv.slice(1)];
    const data = launchData({
      bwrap,
      options: bwrapArgs({
        layout: host.layout,
        network: plan.network,
        binds: inner,
        tmpfsBytes: plan.limits.tmpfsMiB * 1024 * 1024,
        cwd: plan.cwd,
        env,
        fds: {
          passwd: FD.passwd,
          group: FD.group,
          ...(plan.network === 'none' ? { hosts: FD.hosts } : {}),
          ...(seccomp === undefined ? {} : { seccomp: FD.seccomp }),
          info: FD.info,
        },
      }),
      // Without a pids cgroup, RLIMIT_NPROC has to be set inside the sandbox's user namespace.
      payload: lease === undefined ? nprocArgv(plan.limits.pids, script) : script,
      limits: {
        openFiles: plan.limits.openFiles,
        cpuSeconds: plan.limits.cpuSeconds,
        fileSizeMiB: plan.limits.fileSizeMiB,
        ...(lease === undefined ? { dataMiB: plan.limits.memoryMiB } : {}),
      },
      files: {
        passwd: passwdFile(sandboxId.uid, sandboxId.gid),
        group: groupFile(sandboxId.gid),
        ...(plan.network === 'none' ? { hosts: SANDBOX_HOSTS } : {}),
      },
      ...(seccomp === undefined ? {} : { seccomp }),
      ...(drop && host.setpriv !== undefined ? { dropTo: { ...sandboxId, setpriv: host.setpriv } } : {}),
      ...(stage === undefined ? {} : { stage }),
      ...(held.length === 1 ? { hold: held[0]!.src } : {}),
    });
    let info = '';
    let init: SandboxInit | undefined;
    const onInfo = (chunk: Buffer) => {
      if (init !== undefined || info.length > 4096) return;
      info += chunk.toString('utf8');
      init = identifyInit(info);
    };
    // The sandbox's first command says it is there once every process of the chain is bound to its parent's life
    // (`GATE_SCRIPT`): only then may the script start.
    let go: (bytes: Uint8Array) => void = () => undefined;
    const gate = new Promise<Uint8Array>((resolve) => (go = resolve));
    // The launcher gets its message now and gets ready (limits, fds) while the caller's go is pending; its start
    // byte goes only with the go, and only if the run was not called off meanwhile.
    const calledOff = new Error('the run was called off before its go');
    const begin = (opts.ready ?? Promise.resolve()).then(() => {
      if (opts.signal?.aborted === true) throw calledOff;
    });
    const startByte = begin.then(() => START_BYTE);
    const running = launcher.child.start({
      data: new Map<number, Uint8Array | Promise<Uint8Array>>([
        ...data,
        [FD.start, startByte],
        [FD.go, gate],
      ]),
      read: new Map([
        [FD.info, onInfo],
        [FD.ready, () => go(GATE_GO)],
      ]),
      begin,
      // stdin last, after the start byte (its bytes come a turn after that byte's, which are written as they come):
      // a run called off never gets its input, and the launcher's stdin having been read means it may start.
      stdin: startByte.then(() => plan.stdin ?? new Uint8Array()),
      wallTimeMs: plan.limits.wallTimeMs,
      maxOutputBytes: plan.limits.maxOutputBytes,
      ...(opts.signal === undefined ? {} : { signal: opts.signal }),
      ...(opts.onOutput === undefined ? {} : { onOutput: opts.onOutput }),
    });
    // Its failure is met below, once the go is known (never unhandled meanwhile).
    running.catch(() => undefined);
    try {
      await begin;
    } catch (err) {
      // No start byte: the launcher never started the chain, so nothing of the run started.
      launcher.child.discard();
      if (err !== calledOff) throw err;
      const cgroup = lease !== undefined;
      return { outcome: unstarted(), oomKilled: false, seccomp: seccomp !== undefined, cgroup, ended: true };
    }
    const outcome = await running;
    // bwrap exits on its own only after its pid 1 did, that is after every process inside; stopped from outside,
    // it dies first and they follow a moment later: wait for them.
    const stopped = outcome.timedOut || outcome.cancelled || outcome.signal !== null;
    const ended = init !== undefined ? await endSandbox(init) : !stopped;
    const oomKilled = lease === undefined ? false : await lease.oomKilled();
    return {
      outcome: decodeSignal(outcome),
      oomKilled,
      seccomp: seccomp !== undefined,
      cgroup: lease !== undefined,
      ended,
    };
  } catch (err) {
    launcher.child.discard();
    throw err;
  } finally {
    // The sandbox's processes are gone (or reported not to be); releasing the cgroup can trail.
    launchers.done(launcher);
  }
}
