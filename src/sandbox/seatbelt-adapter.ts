import { execFile, spawn as nodeSpawn } from 'node:child_process';
import { watchRss } from './watch-rss.js';
import { access, mkdtemp, readFile, realpath, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SkillsError } from '../errors.js';
import type { Logger } from '../log.js';
import { createInterpreterResolver, type InterpreterResolver } from './resolve-interpreter.js';
import { runChild, type SpawnFn } from './run-child.js';
import { sandboxDenied } from './sandbox-denied.js';
import { SANDBOX_EXEC, seatbeltArgv, seatbeltParams } from './seatbelt-params.js';
import { shimArgv } from './shim.js';
import type { ProbeResult, SandboxAdapter, SandboxPlan } from './types.js';
import { validatePlan } from './validate-plan.js';

export interface SeatbeltAdapterOptions {
  log: Logger;
  env: NodeJS.ProcessEnv;
  /** Folder holding `<profile>.sb`. */
  profilesDir: string;
  resolver?: InterpreterResolver;
  spawn?: SpawnFn;
  now?: () => number;
  clock?: () => Date;
  /** How often the process group's RSS is sampled for the memory limit. */
  rssPollMs?: number;
}

/** The `.sb` file for a plan: `<profile>.sb`, else the shipped one matching network and spawning. */
async function profileFile(dir: string, plan: SandboxPlan): Promise<string> {
  const own = join(dir, `${plan.profile}.sb`);
  const fallback = join(
    dir,
    plan.network === 'full' ? 'network.sb' : plan.limits.allowSpawn ? 'default.sb' : 'strict.sb',
  );
  const file = await access(own).then(
    () => own,
    () => fallback,
  );
  const text = await readFile(file, 'utf8');
  if (plan.network === 'none' && /\(allow network/.test(text)) {
    throw new SkillsError('SANDBOX_FAILED', `${file} allows network but the plan says network: none`);
  }
  if (!plan.limits.allowSpawn && /\(allow process-fork/.test(text)) {
    throw new SkillsError('SANDBOX_FAILED', `${file} allows process-fork but the profile forbids spawning`);
  }
  return file;
}

/**
 * macOS adapter: `sandbox-exec` with a `(deny default)` profile, rlimits through the same bash shim,
 * process-group kill on timeout, and RSS polling for the memory limit (best-effort). Not exercised by CI.
 */
export function createSeatbeltAdapter(o: SeatbeltAdapterOptions): SandboxAdapter {
  const resolver: InterpreterResolver = o.resolver ?? createInterpreterResolver(o.env);
  let cached: ProbeResult | undefined;

  async function probe(): Promise<ProbeResult> {
    if (cached?.healthy === true) return cached;
    const checkedAt = (o.clock ?? (() => new Date()))().toISOString();
    const base = { adapter: 'seatbelt' as const, seccomp: false, checkedAt, binary: SANDBOX_EXEC };
    const limits = {
      cgroup: 'none' as const,
      memory: 'rss-poll-best-effort' as const,
      pids: 'none' as const,
    };
    const ok = await new Promise<boolean>((resolve) =>
      execFile(SANDBOX_EXEC, ['-p', '(version 1)(allow default)', '/usr/bin/true'], { env: {} }, (err) =>
        resolve(err === null),
      ),
    );
    cached = ok
      ? { ...base, healthy: true, diagnosis: { code: 'ok', message: 'sandbox-exec works' }, limits }
      : {
          ...base,
          healthy: false,
          diagnosis: {
            code: 'seatbelt-missing',
            message: `${SANDBOX_EXEC} is missing or failed`,
            hint: 'sandbox-exec ships with macOS; check that this is macOS and that it is not blocked by MDM.',
          },
          limits,
        };
    return cached;
  }

  return {
    name: 'seatbelt',
    probe,
    async run(plan, opts = {}) {
      validatePlan(plan);
      const p = await probe();
      if (!p.healthy) throw sandboxDenied(p);
      const interp = await resolver.resolve(plan.argv[0]!);
      await opts.ready;
      const real = async (paths: readonly string[]) => Promise.all(paths.map((x) => realpath(x)));
      const ws = plan.workspace;
      const tmpDir = await realpath(await mkdtemp(join(tmpdir(), 'skills-mcp-run-')));
      try {
        const params = seatbeltParams({
          readOnly: await real([
            ...interp.mounts,
            ...plan.readOnlyPaths,
            ...(ws && !ws.write ? [ws.path] : []),
          ]),
          writable: await real([...plan.writablePaths, ...(ws?.write === true ? [ws.path] : [])]),
          tmpDir,
        });
        const payload = shimArgv(
          {
            openFiles: plan.limits.openFiles,
            cpuSeconds: plan.limits.cpuSeconds,
            fileSizeMiB: plan.limits.fileSizeMiB,
          },
          [interp.command, ...plan.argv.slice(1)],
        );
        const [command, ...args] = seatbeltArgv(await profileFile(o.profilesDir, plan), params, payload) as [
          string,
          ...string[],
        ];
        const abort = new AbortController();
        const onParentAbort = () => abort.abort();
        opts.signal?.addEventListener('abort', onParentAbort, { once: true });
        const watch = watchRss(plan.limits.memoryMiB * 1024, o.rssPollMs ?? 250, () => abort.abort());
        const spawn: SpawnFn = ((...a: Parameters<SpawnFn>) => {
          const child = (o.spawn ?? nodeSpawn)(...a);
          if (child.pid !== undefined) watch.start(child.pid);
          return child;
        }) as SpawnFn;
        try {
          const outcome = await runChild(
            {
              command,
              args,
              cwd: plan.cwd,
              env: { HOME: tmpDir, TMPDIR: tmpDir, ...plan.env, PATH: `${interp.binDir}:/usr/bin:/bin` },
              ...(plan.stdin === undefined ? {} : { stdin: plan.stdin }),
              wallTimeMs: plan.limits.wallTimeMs,
              maxOutputBytes: plan.limits.maxOutputBytes,
              signal: abort.signal,
              ...(opts.onOutput === undefined ? {} : { onOutput: opts.onOutput }),
            },
            { spawn, ...(o.now === undefined ? {} : { now: o.now }) },
          );
          return {
            ...outcome,
            cancelled: outcome.cancelled && !watch.exceeded(),
            oomKilled: watch.exceeded(),
            evidence: {
              requested: plan.sandbox ?? 'required',
              effective: 'enforced' as const,
              adapter: 'seatbelt' as const,
              active: true,
              profile: plan.profile,
              network: plan.network,
              seccomp: false,
              limits: {
                wall: plan.limits.wallTimeMs,
                cpu: plan.limits.cpuSeconds,
                memory: 'rss-poll-best-effort' as const,
                pids: plan.limits.allowSpawn ? ('none' as const) : ('no-spawn' as const),
              },
            },
          };
        } finally {
          watch.stop();
          opts.signal?.removeEventListener('abort', onParentAbort);
        }
      } finally {
        await rm(tmpDir, { recursive: true, force: true });
      }
    },
    dispose() {
      cached = undefined;
      return Promise.resolve();
    },
  };
}
