import type { Logger } from '../log.js';
import { createInterpreterResolver, type InterpreterResolver } from './resolve-interpreter.js';
import { runChild, type SpawnFn } from './run-child.js';
import { shimArgv } from './shim.js';
import type { ProbeResult, SandboxAdapter } from './types.js';
import { validatePlan } from './validate-plan.js';

export interface OffAdapterOptions {
  log: Logger;
  env: NodeJS.ProcessEnv;
  resolver?: InterpreterResolver;
  spawn?: SpawnFn;
  now?: () => number;
  clock?: () => Date;
}

/**
 * No OS sandbox: only for operators whose config says `sandbox: off`. Still a clean env, the wall-clock
 * kill of the process group, rlimits (CPU, file size, open files, data) and output caps. Every run is
 * logged at warn and its evidence says `active: false`.
 */
export function createOffAdapter(o: OffAdapterOptions): SandboxAdapter {
  const resolver = o.resolver ?? createInterpreterResolver(o.env);
  return {
    name: 'off',
    probe(): Promise<ProbeResult> {
      return Promise.resolve({
        adapter: 'off',
        healthy: true,
        diagnosis: { code: 'ok', message: 'sandbox turned off by operator configuration' },
        limits: { cgroup: 'none', memory: 'rlimit-best-effort', pids: 'none' },
        seccomp: false,
        checkedAt: (o.clock ?? (() => new Date()))().toISOString(),
      });
    },
    async run(plan, opts = {}) {
      validatePlan(plan);
      const interp = await resolver.resolve(plan.argv[0]!);
      await opts.ready;
      o.log.warn(
        { profile: plan.profile, argv0: plan.argv[0] },
        'running without a sandbox (operator config)',
      );
      const outcome = await runChild(
        {
          command: '/bin/bash',
          args: shimArgv(
            {
              openFiles: plan.limits.openFiles,
              cpuSeconds: plan.limits.cpuSeconds,
              fileSizeMiB: plan.limits.fileSizeMiB,
              dataMiB: plan.limits.memoryMiB,
            },
            [interp.command, ...plan.argv.slice(1)],
          ).slice(1),
          cwd: plan.cwd,
          env: { HOME: plan.cwd, ...plan.env, PATH: `${interp.binDir}:/usr/local/bin:/usr/bin:/bin` },
          ...(plan.stdin === undefined ? {} : { stdin: plan.stdin }),
          wallTimeMs: plan.limits.wallTimeMs,
          maxOutputBytes: plan.limits.maxOutputBytes,
          ...(opts.signal === undefined ? {} : { signal: opts.signal }),
          ...(opts.onOutput === undefined ? {} : { onOutput: opts.onOutput }),
        },
        {
          ...(o.spawn === undefined ? {} : { spawn: o.spawn }),
          ...(o.now === undefined ? {} : { now: o.now }),
        },
      );
      return {
        ...outcome,
        oomKilled: false,
        evidence: {
          requested: plan.sandbox ?? 'off',
          effective: 'none',
          adapter: 'off',
          active: false,
          profile: plan.profile,
          network: 'full',
          seccomp: false,
          limits: {
            wall: plan.limits.wallTimeMs,
            cpu: plan.limits.cpuSeconds,
            memory: 'rlimit-best-effort',
            pids: 'none',
          },
        },
      };
    },
    dispose: () => Promise.resolve(),
  };
}
