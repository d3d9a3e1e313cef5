import { chmodSync, chownSync, mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SkillsError } from '../errors.js';
import type { Logger } from '../log.js';
import { createBwrapAdapter } from './bwrap-adapter.js';
import type { HostFacts } from './diagnose-bwrap.js';
import { defaultProfilesDir, loadProfile } from './load-profile.js';
import { createOffAdapter } from './off-adapter.js';
import type { Profile } from './profile-schema.js';
import { createInterpreterResolver, type InterpreterResolver } from './resolve-interpreter.js';
import { resolveProfile, type ProfileResolution } from './resolve-profile.js';
import type { SpawnFn } from './run-child.js';
import { createSeatbeltAdapter } from './seatbelt-adapter.js';
import type { ProbeResult, SandboxAdapter, SandboxMode } from './types.js';

export interface SandboxOptions {
  log: Logger;
  /** The server's environment; used only to find interpreters (PATH, pyenv/nvm variables). */
  env: NodeJS.ProcessEnv;
  platform?: NodeJS.Platform;
  profilesDir?: string;
  /** Operator config. `off` runs everything without an OS sandbox (logged, shown in evidence). */
  mode?: SandboxMode;
  /** Linux: absolute paths where bwrap may be (default `/usr/bin/bwrap`, `/usr/local/bin/bwrap`). */
  bwrapCandidates?: readonly string[];
  /** Linux: use cgroups for memory/pids when available (default true). */
  useCgroups?: boolean;
  /** Linux: reads what explains a failed probe (default: this host's /proc/sys and container signs). */
  hostFacts?: () => Promise<HostFacts>;
  uid?: number;
  gid?: number;
  spawn?: SpawnFn;
  now?: () => number;
  clock?: () => Date;
}

/** The sandbox the runner talks to: the platform adapter plus profiles and output folders. */
export interface Sandbox extends SandboxAdapter {
  readonly mode: SandboxMode;
  readonly profilesDir: string;
  readonly interpreters: InterpreterResolver;
  loadProfile(name: string): Promise<Profile>;
  resolveProfile(operatorDefault: Profile, skillRequested?: Profile): ProfileResolution;
  /** A fresh per-call output folder (mode 700, with `files/`), writable by the sandbox user. */
  createOutputDir(parent?: string): Promise<string>;
  /** Who owns the folders scripts write, when not the server's own user (the server runs as root). */
  readonly folderOwner?: { uid: number; gid: number };
}

function unsupported(platform: string, clock: () => Date): SandboxAdapter {
  const probe: ProbeResult = {
    adapter: 'off',
    healthy: false,
    diagnosis: {
      code: 'unsupported-platform',
      message: `no OS sandbox is available on ${platform}`,
      hint: 'Run on Linux (bubblewrap) or macOS (seatbelt), or set sandbox: off in the server config.',
    },
    limits: { cgroup: 'none', memory: 'none', pids: 'none' },
    seccomp: false,
    checkedAt: clock().toISOString(),
  };
  return {
    name: 'off',
    probe: () => Promise.resolve(probe),
    run: () =>
      Promise.reject(
        new SkillsError('SANDBOX_DENIED', probe.diagnosis.message, { hint: probe.diagnosis.hint ?? '' }),
      ),
    dispose: () => Promise.resolve(),
  };
}

/**
 * Picks the adapter: bubblewrap on Linux, seatbelt on macOS, `off` only when the operator's config says
 * `sandbox: off`. Nothing is probed or spawned until `probe()` or `run()`.
 */
export function createSandbox(o: SandboxOptions): Sandbox {
  const platform = o.platform ?? process.platform;
  const profilesDir = o.profilesDir ?? defaultProfilesDir();
  const mode = o.mode ?? 'required';
  const clock = o.clock ?? (() => new Date());
  const interpreters = createInterpreterResolver(o.env);
  const common = {
    log: o.log,
    env: o.env,
    resolver: interpreters,
    clock,
    ...(o.spawn === undefined ? {} : { spawn: o.spawn }),
    ...(o.now === undefined ? {} : { now: o.now }),
  };
  const uid = o.uid ?? process.getuid?.() ?? 0;
  const gid = o.gid ?? process.getgid?.() ?? 0;
  const adapter: SandboxAdapter =
    mode === 'off'
      ? createOffAdapter(common)
      : platform === 'linux'
        ? createBwrapAdapter({
            ...common,
            uid,
            gid,
            ...(o.bwrapCandidates === undefined ? {} : { bwrapCandidates: o.bwrapCandidates }),
            ...(o.useCgroups === undefined ? {} : { useCgroups: o.useCgroups }),
            ...(o.hostFacts === undefined ? {} : { hostFacts: o.hostFacts }),
          })
        : platform === 'darwin'
          ? createSeatbeltAdapter({ ...common, profilesDir })
          : unsupported(platform, clock);
  if (mode === 'off') o.log.warn('sandbox is off by operator configuration: skill scripts run unconfined');
  const sandboxOwner =
    platform === 'linux' && mode !== 'off' && uid === 0 ? { uid: 65534, gid: 65534 } : undefined;

  return {
    name: adapter.name,
    mode,
    profilesDir,
    interpreters,
    probe: () => adapter.probe(),
    async run(plan, opts) {
      // A go refused before the adapter waits for it is still handled (the adapter rejects with it, or never ran).
      opts?.ready?.catch(() => undefined);
      if (plan.sandbox === 'off' && mode !== 'off') {
        throw new SkillsError('SANDBOX_DENIED', `profile ${plan.profile} asks for no sandbox`, {
          hint: 'Only the server configuration (sandbox: off) can turn the sandbox off.',
        });
      }
      return adapter.run(plan, opts);
    },
    prestage: async (hints) => adapter.prestage?.(hints).catch(() => undefined),
    dispose: () => adapter.dispose(),
    ...(sandboxOwner === undefined ? {} : { folderOwner: sandboxOwner }),
    loadProfile: (name) => loadProfile(profilesDir, name),
    resolveProfile,
    // A few metadata syscalls on the call path: synchronous, as a thread-pool round trip per call costs more.
    createOutputDir(parent = tmpdir()) {
      const dir = mkdtempSync(join(parent, 'skills-mcp-out-'));
      chmodSync(dir, 0o700);
      mkdirSync(join(dir, 'files'), { mode: 0o700 });
      if (sandboxOwner !== undefined) {
        chownSync(dir, sandboxOwner.uid, sandboxOwner.gid);
        chownSync(join(dir, 'files'), sandboxOwner.uid, sandboxOwner.gid);
      }
      return Promise.resolve(dir);
    },
  };
}
