import type { HostLayout } from './host-layout.js';
import type { NetworkMode } from './types.js';

/** A host path mounted at `dest` inside (the same path, except for staged sources). */
export interface Bind {
  src: string;
  dest: string;
  write: boolean;
  /** bwrap binds the folder open on this fd (`--ro-bind-fd`, read-only) instead of `src`. */
  fd?: number;
}

export interface BwrapArgsInput {
  layout: HostLayout;
  network: NetworkMode;
  binds: Bind[];
  tmpfsBytes: number;
  cwd: string;
  env: Record<string, string>;
  /** fds (as the bwrap process sees them) carrying synthesized files and the seccomp program. */
  fds: { passwd: number; group: number; hosts?: number; seccomp?: number; info?: number };
}

export const SANDBOX_HOSTNAME = 'sandbox';
export const SANDBOX_HOSTS = '127.0.0.1 localhost\n::1 localhost ip6-localhost ip6-loopback\n';

/** A one-user `/etc/passwd`: the host's accounts are not visible inside. */
export function passwdFile(uid: number, gid: number): string {
  const lines = [`sandbox:x:${uid}:${gid}:sandbox:/tmp:/usr/sbin/nologin`];
  if (uid !== 65534) lines.push('nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin');
  return `${lines.join('\n')}\n`;
}

export function groupFile(gid: number): string {
  const lines = [`sandbox:x:${gid}:`];
  if (gid !== 65534) lines.push('nogroup:x:65534:');
  return `${lines.join('\n')}\n`;
}

const depth = (p: string) => p.split('/').length;

/** Parents before children, so a nested read-only bind (`.git/hooks`) lands on top of its writable parent. */
export function orderBinds(binds: readonly Bind[]): Bind[] {
  return [...binds].sort((a, b) => depth(a.dest) - depth(b.dest) || a.dest.localeCompare(b.dest));
}

/**
 * The bwrap options of the Linux recipe (notes/sandbox-linux.md), passed NUL-separated on a pipe with
 * `--args FD` so no path or env value shows up in `/proc/1/cmdline` inside the sandbox. bwrap ignores a
 * command inside the `--args` data, so the command (`-- argv…`) stays on the real command line: it is the
 * script's own argv, which the script sees anyway. Pure: no I/O.
 */
export function bwrapArgs(i: BwrapArgsInput): string[] {
  const a: string[] = ['--unshare-all'];
  if (i.network === 'full') a.push('--share-net');
  a.push(
    '--unshare-user',
    '--disable-userns',
    '--cap-drop',
    'ALL',
    '--die-with-parent',
    // The script is the sandbox's pid 1: no bwrap init inside whose memory it could rewrite (same uid, dumpable) to
    // report an early exit and keep running. When pid 1 exits, the kernel kills every process left in the sandbox.
    '--as-pid-1',
    '--new-session',
    '--hostname',
    SANDBOX_HOSTNAME,
  );
  for (const d of i.layout.systemDirs) a.push('--ro-bind', d, d);
  for (const [target, link] of i.layout.symlinks) a.push('--symlink', target, link);
  const etc = i.network === 'full' ? [...i.layout.etc, ...i.layout.etcNetwork] : i.layout.etc;
  for (const e of etc) a.push('--ro-bind-try', e, e);
  a.push('--perms', '0444', '--file', String(i.fds.passwd), '/etc/passwd');
  a.push('--perms', '0444', '--file', String(i.fds.group), '/etc/group');
  if (i.fds.hosts !== undefined) a.push('--perms', '0444', '--file', String(i.fds.hosts), '/etc/hosts');
  const size = String(i.tmpfsBytes);
  a.push('--size', size, '--tmpfs', '/tmp', '--dev', '/dev', '--size', size, '--tmpfs', '/dev/shm');
  // No pseudo-terminals: bwrap 0.8 mounts devpts without `max=`, so ptys would come from the host's shared pool.
  a.push('--tmpfs', '/dev/pts', '--remount-ro', '/dev/pts');
  a.push('--proc', '/proc');
  // A read-only bind of /dev/null (nodev) over them: reading fails with EACCES.
  for (const p of i.layout.hiddenProc) a.push('--ro-bind', '/dev/null', p);
  for (const b of orderBinds(i.binds))
    if (b.fd !== undefined) a.push('--ro-bind-fd', String(b.fd), b.dest);
    else a.push(b.write ? '--bind' : '--ro-bind', b.src, b.dest);
  // The root tmpfs and /dev (unsized tmpfs) would otherwise be writable and unbounded.
  a.push('--remount-ro', '/dev', '--remount-ro', '/');
  a.push('--chdir', i.cwd, '--clearenv');
  for (const [k, v] of Object.entries(i.env).sort(([x], [y]) => x.localeCompare(y))) a.push('--setenv', k, v);
  if (i.fds.seccomp !== undefined) a.push('--seccomp', String(i.fds.seccomp));
  // bwrap reports the sandbox's pid 1 (as the host sees it) there: the server waits for it to be gone.
  if (i.fds.info !== undefined) a.push('--info-fd', String(i.fds.info));
  return a;
}

/** NUL-terminated encoding bwrap reads from `--args FD`. */
export function encodeArgs(args: readonly string[]): Buffer {
  return Buffer.from(args.map((x) => `${x}\0`).join(''), 'utf8');
}
