import { execFile } from 'node:child_process';
import type { Logger } from '../log.js';
import { createCgroupPool, type CgroupPool } from './cgroup-pool.js';
import { detectCgroups } from './detect-cgroups.js';
import { diagnoseBwrapFailure, diagnoseMissingBwrap, type HostFacts } from './diagnose-bwrap.js';
import { checkTrustedBinary, findBwrap } from './find-bwrap.js';
import { detectHostLayout, type HostLayout } from './host-layout.js';
import type { LauncherPool } from './launcher-pool.js';
import type { ResolvedInterpreter } from './resolve-interpreter.js';
import type { LimitsSupport, ProbeResult, SandboxPlan } from './types.js';

/** The probe runs `/bin/true` through the exact recipe a call uses. */
export const PROBE_PLAN: SandboxPlan = {
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
export const PROBE_INTERPRETER: ResolvedInterpreter = {
  command: '/bin/true',
  mounts: [],
  binDir: '/usr/bin',
  source: 'probe',
};

/** What the adapter learns once and reuses for every run. */
export interface BwrapHost {
  probe: ProbeResult;
  bwrap?: string;
  layout: HostLayout;
  pool?: CgroupPool;
  /** Launchers waiting for runs (created on first use). */
  launchers?: LauncherPool;
  /** `/usr/bin/setpriv`, needed when the server is root. */
  setpriv?: string;
}

export interface BwrapProbeDeps {
  candidates: readonly string[];
  uid: number;
  log: Logger;
  useCgroups: boolean;
  seccomp: boolean;
  now: () => Date;
  /** Reads the host facts that explain a failure (the real /proc/sys and container signs, fakes in tests). */
  hostFacts: () => Promise<HostFacts>;
  /** Runs `/bin/true` through the full recipe; resolves to its exit code and stderr. */
  tryRun: (host: BwrapHost) => Promise<{ exitCode: number | null; stderr: string }>;
}

const version = (bin: string) =>
  new Promise<string | undefined>((resolve) =>
    execFile(bin, ['--version'], { env: {}, timeout: 5_000 }, (err, out) =>
      resolve(err ? undefined : out.trim()),
    ),
  );

async function limitsSupport(deps: BwrapProbeDeps): Promise<{ limits: LimitsSupport; pool?: CgroupPool }> {
  if (!deps.useCgroups) {
    return { limits: { cgroup: 'none', memory: 'rlimit-best-effort', pids: 'rlimit', reason: 'disabled' } };
  }
  const cg = await detectCgroups();
  if (cg.kind === 'none') {
    return { limits: { cgroup: 'none', memory: 'rlimit-best-effort', pids: 'rlimit', reason: cg.reason } };
  }
  try {
    const pool = await createCgroupPool(cg, deps.log);
    return { limits: { cgroup: cg.kind, memory: 'cgroup', pids: 'cgroup' }, pool };
  } catch (err) {
    deps.log.warn({ err }, 'cgroup setup failed; memory and pids limits are best-effort');
    return {
      limits: { cgroup: 'none', memory: 'rlimit-best-effort', pids: 'rlimit', reason: 'cgroup setup failed' },
    };
  }
}

/** Finds bwrap, reads the host layout and limits layer, then runs `/bin/true` with the real recipe. */
export async function probeBwrap(deps: BwrapProbeDeps): Promise<BwrapHost> {
  const checkedAt = deps.now().toISOString();
  const layout = await detectHostLayout();
  const sandboxUid = deps.uid === 0 ? 65534 : deps.uid;
  const none: LimitsSupport = { cgroup: 'none', memory: 'none', pids: 'none' };
  const found = await findBwrap(deps.candidates, deps.uid);
  if (found.path === undefined) {
    return {
      layout,
      probe: {
        adapter: 'bwrap',
        healthy: false,
        diagnosis: diagnoseMissingBwrap(found.tried, await deps.hostFacts()),
        limits: none,
        seccomp: false,
        checkedAt,
      },
    };
  }
  const setpriv = deps.uid === 0 ? await checkTrustedBinary('/usr/bin/setpriv', 0) : undefined;
  if (setpriv?.ok === false) {
    return {
      layout,
      probe: {
        adapter: 'bwrap',
        healthy: false,
        binary: found.path,
        diagnosis: {
          code: 'probe-failed',
          message: 'setpriv is missing: a root server needs it to run the sandbox as uid 65534',
          hint: 'Install util-linux (it provides /usr/bin/setpriv).',
          detail: setpriv.reason,
        },
        limits: none,
        seccomp: false,
        checkedAt,
      },
    };
  }
  const { limits, pool } = await limitsSupport(deps);
  const host: BwrapHost = {
    bwrap: found.path,
    layout,
    ...(pool === undefined ? {} : { pool }),
    ...(setpriv?.ok === true ? { setpriv: setpriv.path } : {}),
    probe: {
      adapter: 'bwrap',
      healthy: false,
      binary: found.path,
      diagnosis: { code: 'ok', message: 'bubblewrap works' },
      limits,
      seccomp: deps.seccomp,
      sandboxUid,
      checkedAt,
    },
  };
  const v = await version(found.path);
  if (v !== undefined) host.probe.version = v;
  const r = await deps.tryRun(host).catch((e: unknown) => ({ exitCode: null, stderr: String(e) }));
  if (r.exitCode === 0) {
    host.probe.healthy = true;
    return host;
  }
  host.probe.diagnosis = diagnoseBwrapFailure(r.stderr, await deps.hostFacts(), found.path);
  await host.launchers?.dispose();
  await pool?.dispose();
  delete host.launchers;
  delete host.pool;
  return host;
}
