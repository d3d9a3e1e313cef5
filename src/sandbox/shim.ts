/**
 * The first process inside the sandbox: a constant bash script (never built from data) that closes every
 * inherited fd ≥ 3 (a non-CLOEXEC fd of the server would otherwise reach the script), applies rlimits as
 * hard limits, then `exec`s the payload argv verbatim. bash is needed: dash cannot close a computed fd.
 *
 * `bash -p` (privileged mode) ignores BASH_ENV/ENV and functions exported through the environment, so an
 * env var cannot run code before the limits are in place.
 *
 * Positional parameters: $1 open files, $2 CPU seconds, $3 file size (KiB), $4 data segment (KiB, may be
 * empty), $5 processes (may be empty), then the payload argv.
 */
export const SHIM_SCRIPT = [
  'for f in /proc/self/fd/*; do n=${f##*/}; case $n in 0|1|2) ;; *) if [ -e "$f" ]; then exec {n}>&-; fi ;; esac; done',
  'ulimit -c 0 -n "$1" -t "$2" -f "$3" ${4:+-d "$4"} ${5:+-u "$5"} || { echo "sandbox: cannot apply limits" >&2; exit 126; }',
  'shift 5',
  'exec "$@"',
].join('\n');

export interface ShimLimits {
  openFiles: number;
  cpuSeconds: number;
  fileSizeMiB: number;
  /** RLIMIT_DATA in MiB, only when no cgroup caps memory. */
  dataMiB?: number;
  /** RLIMIT_NPROC, only when no cgroup caps pids. */
  processes?: number;
}

/** argv that runs `payload` under the shim (bash from the sandbox's own /usr). */
export function shimArgv(limits: ShimLimits, payload: readonly string[]): string[] {
  return [
    '/bin/bash',
    '-p',
    '-c',
    SHIM_SCRIPT,
    'bash',
    String(limits.openFiles),
    String(limits.cpuSeconds),
    String(limits.fileSizeMiB * 1024),
    limits.dataMiB === undefined ? '' : String(limits.dataMiB * 1024),
    limits.processes === undefined ? '' : String(limits.processes),
    ...payload,
  ];
}
