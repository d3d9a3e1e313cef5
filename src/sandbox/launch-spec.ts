import { encodeArgs, type Bind } from './bwrap-args.js';
import type { ExtraFd } from './run-child.js';
import { stagerArgs } from './stage-mounts.js';

/**
 * Joins the per-run cgroups (fds 3 and 4, opened by the server) before anything else runs, then becomes
 * bwrap. A constant script: the fd numbers are fixed and the rest is "$@".
 */
export const CGROUP_JOIN_SCRIPT = 'echo $$ >&3 && echo $$ >&4 && exec "$@" 3>&- 4>&-';

/** fds handed to bwrap, by number as the bwrap process sees them. */
export interface LaunchFds {
  passwd: number;
  group: number;
  hosts?: number;
  seccomp?: number;
}

export interface LaunchInput {
  bwrap: string;
  /** Builds the bwrap options once fd numbers are known. */
  options: (fds: LaunchFds) => string[];
  /** argv after `--` (the shim and the script). */
  payload: string[];
  files: { passwd: string; group: string; hosts?: string };
  seccomp?: Buffer;
  /** Open `cgroup.procs` fds of the server (memory, pids; the same file twice on cgroup v2). */
  cgroupFds?: [number, number];
  /** Root only: sources that must be staged, and where. */
  stage?: { dir: string; outer: Bind[]; setpriv: string };
  /** Root only: the uid/gid the sandbox runs as. */
  dropTo?: { uid: number; gid: number };
}

export interface LaunchSpec {
  command: string;
  args: string[];
  extraFds: ExtraFd[];
  uid?: number;
  gid?: number;
}

/**
 * The process chain for one run:
 * - plain: `bwrap --args N -- payload` (as uid 65534 when the server is root);
 * - with cgroups: `/bin/sh -c JOIN sh bwrap …` so the process is inside its cgroup before bwrap forks;
 * - with staging (root): `[sh JOIN] bwrap(root, stager) -- setpriv --reuid 65534 … -- bwrap …`.
 */
export function launchSpec(i: LaunchInput): LaunchSpec {
  const extraFds: ExtraFd[] = [];
  const add = (e: ExtraFd): number => extraFds.push(e) + 2; // fd 3 is extraFds[0]
  if (i.cgroupFds !== undefined) {
    add({ fd: i.cgroupFds[0] });
    add({ fd: i.cgroupFds[1] });
  }
  const stagerFd = i.stage === undefined ? undefined : add({ data: Buffer.alloc(0) });
  const argsFd = add({ data: Buffer.alloc(0) });
  const fds: LaunchFds = {
    passwd: add({ data: Buffer.from(i.files.passwd) }),
    group: add({ data: Buffer.from(i.files.group) }),
  };
  if (i.files.hosts !== undefined) fds.hosts = add({ data: Buffer.from(i.files.hosts) });
  if (i.seccomp !== undefined) fds.seccomp = add({ data: i.seccomp });
  extraFds[argsFd - 3] = { data: encodeArgs(i.options(fds)) };

  let chain = [i.bwrap, '--args', String(argsFd), '--', ...i.payload];
  let drop = i.dropTo;
  if (i.stage !== undefined && stagerFd !== undefined) {
    extraFds[stagerFd - 3] = { data: encodeArgs(stagerArgs(i.stage.dir, i.stage.outer)) };
    const uid = String(i.dropTo?.uid ?? 65534);
    const gid = String(i.dropTo?.gid ?? 65534);
    chain = [
      i.bwrap,
      '--args',
      String(stagerFd),
      '--',
      i.stage.setpriv,
      `--reuid=${uid}`,
      `--regid=${gid}`,
      '--clear-groups',
      '--',
      ...chain,
    ];
    drop = undefined; // the stager must run as root; setpriv drops
  }
  if (i.cgroupFds !== undefined) chain = ['/bin/sh', '-c', CGROUP_JOIN_SCRIPT, 'sh', ...chain];
  const [command, ...args] = chain as [string, ...string[]];
  return { command, args, extraFds, ...(drop === undefined ? {} : { uid: drop.uid, gid: drop.gid }) };
}
