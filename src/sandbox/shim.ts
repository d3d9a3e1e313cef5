/**
 * Constant bash scripts that sit between the spawner and a payload. They are never built from data:
 * limits and argv arrive as positional parameters. `bash -p` (privileged mode) ignores BASH_ENV, ENV,
 * SHELLOPTS and functions exported through the environment, so an env var cannot run code here, and
 * `--norc` stops Debian's bash from sourcing ~/.bashrc because stdin is a socket ("run by rshd").
 */
export const BASH = ['/bin/bash', '--norc', '--noprofile', '-p', '-c'] as const;

/** Closes every inherited fd ≥ 3, then applies hard rlimits. Used where there is no launcher. */
export const SHIM_SCRIPT = [
  'for f in /proc/self/fd/*; do n=${f##*/}; case $n in 0|1|2) ;; *) if [ -e "$f" ]; then exec {n}>&-; fi ;; esac; done',
  'ulimit -c 0 -n "$1" -t "$2" -f "$3" ${4:+-d "$4"} || { echo "sandbox: cannot apply limits" >&2; exit 126; }',
  'shift 4',
  'exec "$@"',
].join('\n');

/**
 * Inside the sandbox, only where no cgroup bounds pids: RLIMIT_NPROC must be set after bwrap created the
 * user namespace, or it would count every process of the host user rather than the sandbox's own.
 */
export const NPROC_SCRIPT =
  'ulimit -u "$1" || { echo "sandbox: cannot apply limits" >&2; exit 126; }\nshift\nexec "$@"';

export interface ShimLimits {
  openFiles: number;
  cpuSeconds: number;
  fileSizeMiB: number;
  /** RLIMIT_DATA in MiB, only when no cgroup caps memory. */
  dataMiB?: number;
}

/** The rlimit values as the scripts take them: open files, CPU s, file size KiB, data KiB (or ''). */
export function limitArgs(l: ShimLimits): string[] {
  return [
    String(l.openFiles),
    String(l.cpuSeconds),
    String(l.fileSizeMiB * 1024),
    l.dataMiB === undefined ? '' : String(l.dataMiB * 1024),
  ];
}

/** argv that runs `payload` under SHIM_SCRIPT (bash from the host's /usr). */
export function shimArgv(limits: ShimLimits, payload: readonly string[]): string[] {
  return [...BASH, SHIM_SCRIPT, 'bash', ...limitArgs(limits), ...payload];
}

/** argv that applies RLIMIT_NPROC inside the sandbox, then runs `payload`. */
export function nprocArgv(processes: number, payload: readonly string[]): string[] {
  return [...BASH, NPROC_SCRIPT, 'bash', String(processes), ...payload];
}
