import { encodeArgs, type Bind } from './bwrap-args.js';
import type { PrepareSpec } from './run-child.js';
import { BASH, limitArgs, type ShimLimits } from './shim.js';
import { stagerArgs, type PreStage } from './stage-mounts.js';

/**
 * The launcher's pipes with the server (fds 5–12 and 15, and the gate's, moved to 3 and 4), closed in its helper
 * processes.
 */
const CLOSE_PIPES = '3<&- 4>&- 5<&- 6<&- 7<&- 8<&- 9<&- 10<&- 11<&- 12<&- 15<&-';

/** Starts `"$@"` as a child and waits for it, handing on stdin and the default SIGINT and SIGQUIT (`WAITER_SCRIPT`). */
const WAIT = '{ trap - INT QUIT; exec "$@"; } <&0 & wait $!; exit $?';
/** A chain's first word when the launcher is to be its waiter. */
const WAIT_HERE = '--wait';
/**
 * The server's start byte (fd 15), then that fd closed: nothing of the chain starts before it. An end of file (the
 * server gone, or the run called off) or any other byte ends the launcher, with the code of a run that never started.
 */
const AWAIT_START = 'read -r -N 1 -u 15 go && [ "$go" = 1 ] || exit 125; exec 15<&-';

/**
 * The launcher is spawned ahead of each run (see `launcher-pool.ts`) so the slow parts happen off the
 * call path: on cgroup v1, moving a process into a cgroup costs ≈ 11 ms (a percpu rwsem write lock),
 * and bash itself takes a few ms to start. It joins the run's cgroups through fds 3 and 4 (opened by the
 * server), then blocks until the server writes the run's message on fd 5. Then it applies the rlimits and
 * closes every inherited fd except the ones bwrap reads (a non-CLOEXEC fd of the server must not reach
 * the script; bwrap closes the ones it reads). The server sends the message while the call's start is being
 * recorded; only its start byte (fd 15, once that record is durable) lets the launcher `exec` the chain (or, as a
 * root waiter, start it and wait for it: forked before the byte, the chain's process waits for it itself). A
 * constant script: the message is NUL-separated data, never code.
 */
export const LAUNCHER_SCRIPT = [
  'echo $$ >&3 && echo $$ >&4 || exit 125',
  // The gate's pipes (`GATE_SCRIPT`) move to fds 3 and 4: the sandbox's `/bin/sh` may be dash, which takes
  // single-digit fds only.
  'exec 3<&13 4>&14 13<&- 14<&-',
  // stdio from the server is a socket made in the host's network namespace (socket ioctls on it would list the
  // host's interfaces): the script gets pipes, fed by three `cat`s outside the sandbox, set up before the call.
  `exec 0< <(exec cat ${CLOSE_PIPES}) 1> >(exec cat ${CLOSE_PIPES}) 2> >(exec cat >&2 ${CLOSE_PIPES})`,
  "readarray -d '' -u 5 m",
  'exec 5<&-',
  '[ "${#m[@]}" -ge 6 ] || exit 0',
  'set -- "${m[@]}"',
  'keep=",$1,"',
  'shift',
  'ulimit -c 0 -n "$1" -t "$2" -f "$3" ${4:+-d "$4"} || { echo "sandbox: cannot apply limits" >&2; exit 126; }',
  // Signals queued and POSIX message-queue bytes are counted per user across runs: each run gets a small share
  // (where the hard limit is lower already, it stays).
  'ulimit -i 1024 2>/dev/null; ulimit -q 65536 2>/dev/null',
  'shift 4',
  'for f in /proc/self/fd/*; do n=${f##*/}; case ",$n," in ,0,|,1,|,2,) ;; *) case $keep in *",$n,"*) ;; *) if [ -e "$f" ]; then exec {n}>&-; fi ;; esac ;; esac; done',
  // A pre-staged root launcher is itself the waiter (`WAITER_SCRIPT`): no second shell to start on the call's path,
  // and the fork happens before the start byte, which the chain's process waits for.
  `if [ "$1" = ${WAIT_HERE} ]; then shift; { trap - INT QUIT; ${AWAIT_START}; exec "$@"; } <&0 & exec 15<&-; wait $!; exit $?; fi`,
  AWAIT_START,
  'exec "$@"',
].join('\n');

/**
 * A root chain's sandbox user is started by a root shell that stays and waits for it, instead of being exec'ed in
 * its place. When the server dies, the kernel sends each process's parent-death signal on behalf of its dying
 * parent, with that parent's permissions; a stager's bwrap runs as root without capabilities, which may not signal a
 * process of another user, so a sandbox started right below it would outlive the server. This shell (root, with the
 * stager's capabilities) dies with the stager and takes the sandbox with it. A background command of a shell without
 * job control starts with stdin from /dev/null and SIGINT and SIGQUIT ignored: stdin is handed on and both signals are
 * reset, so the script starts as it would without the waiter.
 */
export const WAITER_SCRIPT = WAIT;

/**
 * The sandbox's first command, before the payload: it tells the server it is there (fd 4) and waits for its go
 * (fd 3). bubblewrap arms `--die-with-parent` in its outer process after creating the sandbox and in the sandbox's
 * first process only before this command runs, and checks neither time whether the parent is still there: a server
 * killed in between would leave a script running that nothing stops. An answer to the sandbox's own word proves the
 * whole chain was armed while the server lived; a server that is gone answers nothing (end-of-file), and the script
 * never starts.
 */
export const GATE_SCRIPT =
  'echo 1 >&4 || exit 125; exec 4>&-; read -r go <&3 && [ "$go" = 1 ] || exit 125; exec 3<&-; exec "$@"';
const GATE = ['/bin/sh', '-c', GATE_SCRIPT, 'skills-mcp-gate'];

/**
 * Opens the folder the server holds (`/proc/<server>/fd/<fd>`, the launcher's own user's) on `FD.held` for the
 * bwrap it then becomes, which binds it with `--ro-bind-fd` and closes it: bwrap in its user namespace may not
 * follow another process's fd link itself. Only for a launcher running as the server.
 */
const HOLD_SCRIPT = `exec 16<"$1" || exit 125; shift; exec "$@"`;

/** The server's go, once the sandbox's first command said it is there. */
export const GATE_GO = Buffer.from('1\n');

/** The launcher's start byte (`FD.start`), once the call's start is durable. */
export const START_BYTE = Buffer.from('1');

/** Fixed fd layout of a launcher (as the launcher and the bwrap it becomes see them). */
export const FD = {
  cgMemory: 3,
  cgPids: 4,
  control: 5,
  stager: 6,
  args: 7,
  seccomp: 8,
  passwd: 9,
  group: 10,
  hosts: 11,
  /** bwrap's `--info-fd`: the host pid of the sandbox's pid 1, read by the server. */
  info: 12,
  /** The gate (`GATE_SCRIPT`): the server's go, and the sandbox's word that it is there (fds 3 and 4 inside). */
  go: 13,
  ready: 14,
  /** The start byte (`AWAIT_START`): the chain may start. */
  start: 15,
  /** A folder the server holds, for bwrap's `--ro-bind-fd` (`HOLD_SCRIPT`); opened only once the chain starts. */
  held: 16,
};
const PIPES = [
  FD.control,
  FD.stager,
  FD.args,
  FD.seccomp,
  FD.passwd,
  FD.group,
  FD.hosts,
  FD.info,
  FD.go,
  FD.ready,
  FD.start,
];
/** Where the launcher moves the gate's pipes. */
const GATE_FDS = [3, 4];

/**
 * How to spawn a launcher: bash with an empty env in `/`, its cgroup fds (or /dev/null twice), ten pipes. A root
 * launcher may be pre-staged: bash then waits inside a stager bwrap that already mounted `stage.ps`'s folders.
 */
export function launcherSpec(
  cgroupFds: readonly [number, number],
  stage?: { bwrap: string; ps: PreStage },
): PrepareSpec {
  const bash = [...BASH, LAUNCHER_SCRIPT, 'skills-mcp-launcher'];
  const argv =
    stage === undefined ? bash : [stage.bwrap, ...stagerArgs(stage.ps.dir, stage.ps.roots), '--', ...bash];
  return {
    command: argv[0]!,
    args: argv.slice(1),
    env: {},
    cwd: '/',
    extraFds: [{ fd: cgroupFds[0] }, { fd: cgroupFds[1] }, ...PIPES.map(() => 'pipe' as const)],
  };
}

/** Root only: the sandbox user a root launcher drops to, with setpriv. */
interface DropTo {
  uid: number;
  gid: number;
  setpriv: string;
}

export interface LaunchInput {
  bwrap: string;
  /** bwrap's options (see `bwrapArgs`), with files at `FD.passwd` etc. */
  options: string[];
  /** argv after bwrap's `--`. */
  payload: string[];
  limits: ShimLimits;
  files: { passwd: string; group: string; hosts?: string };
  seccomp?: Buffer;
  /** Root only: drop to this uid/gid with setpriv before the sandbox. */
  dropTo?: DropTo;
  /** Root only: stage these binds in a root mount namespace first (`stage-mounts.ts`). */
  stage?: { dir: string; outer: Bind[] };
  /** Not root: the `/proc/<server>/fd/<fd>` path to open on `FD.held` before bwrap starts (`HOLD_SCRIPT`). */
  hold?: string;
}

/**
 * The bytes for each launcher pipe but the gate's and the start byte's (the server writes those when their time
 * comes). The chain it execs (payload: the gate, then the script's argv):
 * - `bwrap --args 7 -- payload` (server not root, or a root server's launcher running as 65534);
 * - `--wait setpriv --reuid=65534 … -- bwrap …` (server root, in a pre-staged launcher, which waits for the chain);
 * - `bwrap --args 6 -- bash -c WAITER_SCRIPT setpriv … -- bwrap --args 7 -- payload` (server root, staged sources).
 */
export function launchData(i: LaunchInput): Map<number, Buffer> {
  let chain = [i.bwrap, '--args', String(FD.args), '--', ...GATE, ...i.payload];
  if (i.hold !== undefined) chain = [...BASH, HOLD_SCRIPT, 'skills-mcp-hold', i.hold, ...chain];
  if (i.dropTo !== undefined) {
    const d = i.dropTo;
    const drop = [d.setpriv, `--reuid=${d.uid}`, `--regid=${d.gid}`, '--clear-groups', '--'];
    // Staging first, the waiter is a shell inside the stager; a pre-staged launcher (root) is the waiter itself.
    chain =
      i.stage === undefined
        ? [WAIT_HERE, ...drop, ...chain]
        : [...BASH, WAITER_SCRIPT, 'skills-mcp-waiter', ...drop, ...chain];
  }
  const keep = [...GATE_FDS, FD.args, FD.passwd, FD.group, FD.info, FD.start];
  const data = new Map<number, Buffer>([
    [FD.args, encodeArgs(i.options)],
    [FD.passwd, Buffer.from(i.files.passwd)],
    [FD.group, Buffer.from(i.files.group)],
  ]);
  if (i.files.hosts !== undefined) {
    data.set(FD.hosts, Buffer.from(i.files.hosts));
    keep.push(FD.hosts);
  }
  if (i.seccomp !== undefined) {
    data.set(FD.seccomp, i.seccomp);
    keep.push(FD.seccomp);
  }
  if (i.stage !== undefined) {
    data.set(FD.stager, encodeArgs(stagerArgs(i.stage.dir, i.stage.outer)));
    keep.push(FD.stager);
    chain = [i.bwrap, '--args', String(FD.stager), '--', ...chain];
  }
  data.set(FD.control, encodeArgs([keep.sort((a, b) => a - b).join(','), ...limitArgs(i.limits), ...chain]));
  return data;
}
