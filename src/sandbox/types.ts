/**
 * The sandbox contract. The runner builds a {@link SandboxPlan} and calls
 * `adapter.run(plan, opts)`; every result carries {@link SandboxEvidence} saying honestly what was enforced.
 */

/** `required`: run only inside a healthy OS sandbox. `off`: operator config turned the sandbox off. */
export type SandboxMode = 'required' | 'off';
export type NetworkMode = 'none' | 'full';
export type AdapterName = 'bwrap' | 'seatbelt' | 'off';

/** Limits a profile sets. All sizes are per run. */
export interface SandboxLimits {
  /** Wall-clock limit; the whole process tree is killed when it passes. */
  wallTimeMs: number;
  /** CPU seconds (RLIMIT_CPU). */
  cpuSeconds: number;
  /** Memory cap (cgroup where available, else best-effort). */
  memoryMiB: number;
  /** Processes + threads (cgroup pids where available, else RLIMIT_NPROC). */
  pids: number;
  /** Size of the private `/tmp` and of `/dev/shm`. */
  tmpfsMiB: number;
  /** Largest file a script may write (RLIMIT_FSIZE). */
  fileSizeMiB: number;
  /** Cap on captured stdout and on captured stderr, each. */
  maxOutputBytes: number;
  /** RLIMIT_NOFILE. */
  openFiles: number;
  /** When false, creating processes (fork, vfork, clone without CLONE_THREAD) is refused. */
  allowSpawn: boolean;
}

export interface SandboxWorkspace {
  /** Absolute host path; appears at the same path inside. */
  path: string;
  /**
   * Writes allowed: the script works on a private copy and the adapter applies the regular-file changes it may
   * (never `.git` or other host-interpreted paths, never symlinks) to the host afterwards.
   */
  write: boolean;
  /**
   * Absolute host paths the server itself reads (its skills folders, audit log, sandbox profiles): a run that
   * writes the workspace never changes them, nor anything below them, when they lie inside it.
   */
  protect?: string[];
  /**
   * Absolute host paths a run never sees in the workspace (the approval console's link files): left out of a writing
   * run's copy, and covered by `emptyDir` (an empty read-only folder) when they lie inside the workspace.
   */
  hide?: string[];
  emptyDir?: string;
  /** A run that fails (exit code, signal, timeout, out of memory, cancelled) applies its changes only when set. */
  applyFailed?: boolean;
  /** The call's files folder: a failed run's written files are kept there, under `workspace-changes/`. */
  keepIn?: string;
}

/** One run, fully decided. Nothing in it is a shell string. */
export interface SandboxPlan {
  /** argv[0] is an interpreter name (`python3`, `node`, `bash`) or an absolute path. */
  argv: string[];
  /** Absolute working directory (must be one of the mounted paths). */
  cwd: string;
  /** Environment for the script, already allow-listed by the caller. `PATH` is set by the adapter. */
  env: Record<string, string>;
  /** Host paths mounted read-only at the same path (the skill folder, inputs). */
  readOnlyPaths: string[];
  /** Host paths mounted writable at the same path (the per-call output folder). */
  writablePaths: string[];
  workspace?: SandboxWorkspace;
  network: NetworkMode;
  limits: SandboxLimits;
  /** Bytes written to the script's stdin (then closed). */
  stdin?: Uint8Array;
  /** Profile name, for evidence. */
  profile: string;
  /** From the profile; `off` only ever comes from operator-authored config. Default `required`. */
  sandbox?: SandboxMode;
}

export interface OutputChunk {
  stream: 'stdout' | 'stderr';
  bytes: number;
}

export interface RunOptions {
  signal?: AbortSignal;
  /**
   * The go for the run: the sandbox may get ready meanwhile (launcher, limits, arguments; the launcher may read its
   * message), but no process of the run starts until this is fulfilled. Rejected: nothing runs, and `run` rejects
   * with its reason.
   */
  ready?: Promise<void>;
  /** Called for every chunk read (sizes only), for progress notifications. */
  onOutput?: (chunk: OutputChunk) => void;
}

export type MemoryLayer = 'cgroup' | 'rlimit-best-effort' | 'rss-poll-best-effort' | 'none';
/** `no-spawn`: the profile forbids creating processes and nothing else bounds them. */
export type PidsLayer = 'cgroup' | 'rlimit' | 'no-spawn' | 'none';

/** What was asked for and what was actually enforced, for the audit log. */
export interface SandboxEvidence {
  /** What the profile asked for. */
  requested: SandboxMode;
  /** What was enforced: `enforced` inside an OS sandbox, `none` when the operator turned it off. */
  effective: 'enforced' | 'none';
  adapter: AdapterName;
  /** True when the run happened inside an OS sandbox. */
  active: boolean;
  profile: string;
  network: NetworkMode;
  /** True when the syscall filter was installed. */
  seccomp: boolean;
  limits: {
    /** Wall-clock limit in ms (always enforced by killing the tree). */
    wall: number;
    /** CPU seconds via RLIMIT_CPU. */
    cpu: number;
    memory: MemoryLayer;
    pids: PidsLayer;
  };
}

export interface SandboxResult {
  exitCode: number | null;
  signal: NodeJS.Signals | null;
  /** Captured stdout, at most `maxOutputBytes` plus a truncation marker. */
  stdout: Buffer;
  stderr: Buffer;
  truncated: { stdout: boolean; stderr: boolean };
  /** Bytes the script wrote, including the ones dropped past the cap. */
  bytes: { stdout: number; stderr: number };
  durationMs: number;
  timedOut: boolean;
  cancelled: boolean;
  /** The kernel's OOM killer ended the run (known only with cgroups). */
  oomKilled: boolean;
  /** What the run changed in a workspace it could write, as applied to the host. */
  workspace?: WorkspaceChanges;
  evidence: SandboxEvidence;
}

export type DiagnosisCode =
  | 'ok'
  | 'bwrap-missing'
  | 'userns-disabled'
  | 'apparmor-userns-restricted'
  | 'nested-container'
  | 'mount-denied'
  | 'seatbelt-missing'
  | 'unsupported-platform'
  | 'probe-failed';

export interface Diagnosis {
  code: DiagnosisCode;
  /** One line a person can read. */
  message: string;
  /** What to do about it. */
  hint?: string;
  /** Tail of the failing command's stderr, when there was one. */
  detail?: string;
}

export interface LimitsSupport {
  /** Which cgroup layer runs will use. */
  cgroup: 'v2' | 'v1' | 'none';
  memory: MemoryLayer;
  pids: PidsLayer;
  /** Why cgroups are not used, when they are not. */
  reason?: string;
}

export interface ProbeResult {
  adapter: AdapterName;
  healthy: boolean;
  /** Absolute path of the sandbox binary, when found. */
  binary?: string;
  version?: string;
  diagnosis: Diagnosis;
  limits: LimitsSupport;
  seccomp: boolean;
  /** uid the sandboxed process runs as on the host. */
  sandboxUid?: number;
  checkedAt: string;
}

/** What a coming run will look like, for `SandboxAdapter.prestage`. */
export interface PrestageHints {
  /** The interpreters it may start (`python3`, `node`, `bash`). */
  interpreters: string[];
  /** Folders it binds (`childOf`: a folder right in this one, as a call's own output folder). */
  sources: { src: string; write: boolean; childOf?: boolean }[];
}

export interface SandboxAdapter {
  readonly name: AdapterName;
  /** Cached after success; a failed probe is re-run on the next call. */
  probe(): Promise<ProbeResult>;
  run(plan: SandboxPlan, opts?: RunOptions): Promise<SandboxResult>;
  /**
   * Gets ready ahead of a first run like `hints` (its interpreter and the folders it binds), where the adapter
   * has something to prepare (a root bwrap server's pre-staged launcher). Never rejects; nothing runs.
   */
  prestage?(hints: PrestageHints): Promise<void>;
  /** Releases pre-created cgroups and other resources. Safe to call twice. */
  dispose(): Promise<void>;
}

/** What a run changed in the workspace, as applied to the host. Paths are POSIX, relative to the workspace. */
export interface WorkspaceChanges {
  /** Regular files created or rewritten. */
  written: string[];
  /** sha256 and size of what was written, by path. */
  digests: Map<string, { sha256: string; bytes: number }>;
  deleted: string[];
  /** Changes left out, and why (a symlink, `.git`, a host-interpreted file, a conflict…). */
  refused: Array<{ path: string; reason: string }>;
  /**
   * False when the run failed and nothing was applied: `written` and `deleted` are then what would have changed
   * (and the written files are kept as the call's files).
   */
  applied: boolean;
}
