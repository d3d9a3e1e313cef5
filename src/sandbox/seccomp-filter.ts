import {
  ARCH_SPECIFIC_SYSCALLS,
  DENIED_SYSCALLS,
  FIRST_UNKNOWN_SYSCALL,
  syscallTable,
  type SyscallTable,
} from './syscall-table.js';

// Classic BPF opcodes (linux/filter.h) and seccomp return values (linux/seccomp.h).
const LD_W_ABS = 0x20;
const JEQ_K = 0x15;
const JGE_K = 0x35;
const JSET_K = 0x45;
const RET_K = 0x06;
const RET_ALLOW = 0x7fff0000;
const RET_KILL_PROCESS = 0x80000000;
const retErrno = (errno: number) => 0x00050000 | errno;

const EPERM = 1;
const ENOSYS = 38;
const EAFNOSUPPORT = 97;
const AF_ALLOWED = [1, 2, 10, 16]; // AF_UNIX, AF_INET, AF_INET6, AF_NETLINK
const TIOCSTI = 0x5412;
const TIOCLINUX = 0x541c;
const CLONE_THREAD = 0x00010000;
const PR_SET_PDEATHSIG = 1;
const SIGKILL = 9;
const PERSONALITY_QUERY = 0xffffffff;
// CLONE_NEWNS | NEWCGROUP | NEWUTS | NEWIPC | NEWUSER | NEWPID | NEWNET
const CLONE_NS_FLAGS =
  0x00020000 | 0x02000000 | 0x04000000 | 0x08000000 | 0x10000000 | 0x20000000 | 0x40000000;

// struct seccomp_data offsets (little-endian: the low 32 bits of args[i] sit at 16 + 8i).
const OFF_NR = 0;
const OFF_ARCH = 4;
const OFF_ARG0 = 16;
const OFF_ARG1 = 24;

/** A label, or `next` for the following instruction. */
type Target = string;
type Insn =
  | { op: 'ld'; off: number }
  | { op: 'jeq' | 'jge' | 'jset'; k: number; t: Target; f: Target }
  | { op: 'ret'; k: number }
  | { op: 'label'; name: string };

/** Resolves labels into 8-bit relative jumps and encodes `struct sock_filter[]`. */
function assemble(prog: Insn[]): Buffer {
  const code = prog.filter((i) => i.op !== 'label');
  const labels = new Map<string, number>();
  let pc = 0;
  for (const i of prog) {
    if (i.op === 'label') labels.set(i.name, pc);
    else pc++;
  }
  const out = Buffer.alloc(code.length * 8);
  code.forEach((i, at) => {
    const rel = (t: Target): number => {
      if (t === 'next') return 0;
      const dest = labels.get(t);
      if (dest === undefined || dest <= at || dest - at - 1 > 255) throw new Error(`bad jump to ${t}`);
      return dest - at - 1;
    };
    let op = 0;
    let jt = 0;
    let jf = 0;
    let k = 0;
    if (i.op === 'ld') [op, k] = [LD_W_ABS, i.off];
    else if (i.op === 'ret') [op, k] = [RET_K, i.k];
    else if (i.op === 'jeq' || i.op === 'jge' || i.op === 'jset') {
      op = i.op === 'jeq' ? JEQ_K : i.op === 'jge' ? JGE_K : JSET_K;
      [jt, jf, k] = [rel(i.t), rel(i.f), i.k];
    }
    out.writeUInt16LE(op, at * 8);
    out.writeUInt8(jt, at * 8 + 2);
    out.writeUInt8(jf, at * 8 + 3);
    out.writeUInt32LE(k >>> 0, at * 8 + 4);
  });
  return out;
}

export interface SeccompOptions {
  /** When false, fork/vfork and clone without CLONE_THREAD fail with EPERM. */
  allowSpawn: boolean;
}

/** The filter program for one table (exported for tests). */
export function seccompProgram(table: SyscallTable, opts: SeccompOptions): Buffer {
  const nr = (name: string): number => {
    const n = table.nr[name];
    if (n === undefined) throw new Error(`no syscall number for ${name}`);
    return n;
  };
  const p: Insn[] = [
    { op: 'ld', off: OFF_ARCH },
    { op: 'jeq', k: table.auditArch, t: 'next', f: 'kill' },
    { op: 'ld', off: OFF_NR },
  ];
  if (table.x32Bit !== 0) p.push({ op: 'jge', k: table.x32Bit, t: 'enosys', f: 'next' });
  p.push({ op: 'jge', k: FIRST_UNKNOWN_SYSCALL, t: 'enosys', f: 'next' });
  for (const name of DENIED_SYSCALLS) {
    if (table.nr[name] === undefined && ARCH_SPECIFIC_SYSCALLS.has(name)) continue;
    p.push({ op: 'jeq', k: nr(name), t: 'eperm', f: 'next' });
  }
  p.push(
    { op: 'jeq', k: nr('prctl'), t: 'prctl', f: 'next' },
    { op: 'jeq', k: nr('personality'), t: 'personality', f: 'next' },
    { op: 'jeq', k: nr('socket'), t: 'socket', f: 'next' },
    { op: 'jeq', k: nr('socketpair'), t: 'socket', f: 'next' },
    { op: 'jeq', k: nr('ioctl'), t: 'ioctl', f: 'next' },
    { op: 'jeq', k: nr('clone'), t: 'clone', f: 'next' },
    // clone3 passes its flags in memory a filter cannot read; glibc falls back to clone on ENOSYS.
    { op: 'jeq', k: nr('clone3'), t: 'enosys', f: 'next' },
  );
  if (!opts.allowSpawn) {
    for (const name of ['fork', 'vfork']) {
      if (table.nr[name] !== undefined) p.push({ op: 'jeq', k: nr(name), t: 'eperm', f: 'next' });
    }
  }
  p.push({ op: 'ret', k: RET_ALLOW }, { op: 'label', name: 'socket' }, { op: 'ld', off: OFF_ARG0 });
  for (const af of AF_ALLOWED) p.push({ op: 'jeq', k: af, t: 'allow', f: 'next' });
  p.push(
    { op: 'ret', k: retErrno(EAFNOSUPPORT) },
    { op: 'label', name: 'ioctl' },
    { op: 'ld', off: OFF_ARG1 },
    { op: 'jeq', k: TIOCSTI, t: 'eperm', f: 'next' },
    { op: 'jeq', k: TIOCLINUX, t: 'eperm', f: 'next' },
    { op: 'ret', k: RET_ALLOW },
    // The sandbox's pid 1 is the script (bwrap --as-pid-1), killed with its parent by PDEATHSIG=SIGKILL: it may not
    // swap that for a signal it can ignore.
    { op: 'label', name: 'prctl' },
    { op: 'ld', off: OFF_ARG0 },
    { op: 'jeq', k: PR_SET_PDEATHSIG, t: 'next', f: 'allow' },
    { op: 'ld', off: OFF_ARG1 },
    { op: 'jeq', k: SIGKILL, t: 'allow', f: 'eperm' },
    // Only the default persona (and the query): no ADDR_NO_RANDOMIZE, READ_IMPLIES_EXEC and the like.
    { op: 'label', name: 'personality' },
    { op: 'ld', off: OFF_ARG0 },
    { op: 'jeq', k: 0, t: 'allow', f: 'next' },
    { op: 'jeq', k: PERSONALITY_QUERY, t: 'allow', f: 'eperm' },
    { op: 'label', name: 'clone' },
    { op: 'ld', off: OFF_ARG0 },
    { op: 'jset', k: CLONE_NS_FLAGS, t: 'eperm', f: 'next' },
  );
  if (!opts.allowSpawn) p.push({ op: 'jset', k: CLONE_THREAD, t: 'allow', f: 'eperm' });
  p.push(
    { op: 'label', name: 'allow' },
    { op: 'ret', k: RET_ALLOW },
    { op: 'label', name: 'eperm' },
    { op: 'ret', k: retErrno(EPERM) },
    { op: 'label', name: 'enosys' },
    { op: 'ret', k: retErrno(ENOSYS) },
    // Another ABI on the same kernel (i386 via int 0x80, arm32) would bypass these numbers: kill.
    { op: 'label', name: 'kill' },
    { op: 'ret', k: RET_KILL_PROCESS },
  );
  return assemble(p);
}

/**
 * The seccomp filter bwrap loads with `--seccomp FD`: deny ptrace, keyrings, bpf, perf, userfaultfd,
 * io_uring, the mount API (old and new), namespaces, kexec/modules, inotify/fanotify (they would report what
 * host processes do on the shared read-only mounts), kcmp, memfd_secret, modify_ldt, personality flags,
 * TIOCSTI/TIOCLINUX, socket families other than unix/inet/inet6/netlink (AF_VSOCK reaches the VM host),
 * foreign ABIs, and every syscall newer than the table (ENOSYS). Undefined on unknown architectures.
 */
export function buildSeccompFilter(arch: string, opts: SeccompOptions): Buffer | undefined {
  const table = syscallTable(arch);
  return table === undefined ? undefined : seccompProgram(table, opts);
}
