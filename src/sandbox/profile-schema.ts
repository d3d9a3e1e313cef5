import * as z from 'zod';
import type { SandboxLimits } from './types.js';

/** Profile names are file names in `sandbox-profiles/`: no dots, slashes or upper case, so no traversal. */
export const PROFILE_NAME_RE = /^[a-z0-9-]+$/;

/** An environment variable name, or a prefix ending in `*` (`LC_*`). */
const ENV_PATTERN_RE = /^[A-Za-z_][A-Za-z0-9_]*\*?$/;

const int = (min: number, max: number) => z.number().int().min(min).max(max);

export const ProfileSchema = z
  .object({
    description: z.string().min(1).max(500).describe('What this profile is for, one sentence.'),
    sandbox: z
      .enum(['required', 'off'])
      .describe(
        '`required`: run only inside a healthy OS sandbox, else refuse (`SANDBOX_DENIED`). `off`: no sandbox; operator config only, logged and shown in evidence.',
      ),
    network: z
      .enum(['none', 'full'])
      .describe('`none`: a private network namespace with only `lo`. `full`: the host network.'),
    wallTimeMs: int(100, 3_600_000).describe(
      'Wall-clock limit in milliseconds; the whole process tree is killed.',
    ),
    cpuSeconds: int(1, 3_600).describe('CPU time limit in seconds (RLIMIT_CPU).'),
    memoryMiB: int(16, 65_536).describe(
      'Memory limit in MiB: reliable with cgroups, best-effort (RLIMIT_DATA) without.',
    ),
    pids: int(4, 65_536).describe(
      'Processes plus threads: reliable with cgroups, RLIMIT_NPROC without. Counts the sandbox helpers too.',
    ),
    tmpfsMiB: int(1, 65_536).describe('Size of the private /tmp and of /dev/shm, each, in MiB.'),
    fileSizeMiB: int(1, 65_536).describe('Largest file a script may write, in MiB (RLIMIT_FSIZE).'),
    maxOutputBytes: int(1_024, 1_073_741_824).describe(
      'Cap on captured stdout and on captured stderr, each; the rest is dropped and a marker added.',
    ),
    openFiles: int(16, 65_536).default(256).describe('Open file descriptors (RLIMIT_NOFILE).'),
    allowSpawn: z
      .boolean()
      .default(true)
      .describe('When false, scripts cannot create processes (threads still work).'),
    readOnlyPaths: z
      .array(z.string().min(1).max(4096))
      .max(64)
      .default([])
      .describe(
        'Host paths every run of this profile sees read-only at the same path (a program installed outside /usr, a font folder). Each must exist, be its real path, hold no secrets and be writable by no one but its owner.',
      ),
    env: z
      .object({
        allow: z
          .array(z.string().regex(ENV_PATTERN_RE, 'an env var name, or a prefix ending in *'))
          .max(256)
          .default([])
          .describe('Names (or `PREFIX*`) of server env vars a script may receive.'),
      })
      .strict()
      .default({ allow: [] })
      .describe('Environment pass-through.'),
  })
  .strict()
  .describe('A sandbox profile (sandbox-profiles/<name>.yaml).');

export type ProfileConfig = z.infer<typeof ProfileSchema>;

/** A validated profile and the name it was loaded under. */
export type Profile = ProfileConfig & { name: string };

/** The limits part of a profile, as a plan carries them. */
export function profileLimits(p: ProfileConfig): SandboxLimits {
  return {
    wallTimeMs: p.wallTimeMs,
    cpuSeconds: p.cpuSeconds,
    memoryMiB: p.memoryMiB,
    pids: p.pids,
    tmpfsMiB: p.tmpfsMiB,
    fileSizeMiB: p.fileSizeMiB,
    maxOutputBytes: p.maxOutputBytes,
    openFiles: p.openFiles,
    allowSpawn: p.allowSpawn,
  };
}
