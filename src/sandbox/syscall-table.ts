/** Syscall numbers and ABI constants the seccomp filter needs, per architecture. */

export interface SyscallTable {
  /** AUDIT_ARCH_* value of the native ABI. */
  auditArch: number;
  /** x32 syscalls on x86_64 carry this bit; 0 where there is no such ABI. */
  x32Bit: number;
  nr: Record<string, number>;
}

/** Syscalls denied with EPERM in every profile (see notes/sandbox-linux.md). */
export const DENIED_SYSCALLS = [
  'ptrace',
  'process_vm_readv',
  'process_vm_writev',
  'pidfd_getfd',
  'keyctl',
  'add_key',
  'request_key',
  'bpf',
  'perf_event_open',
  'userfaultfd',
  'io_uring_setup',
  'io_uring_enter',
  'io_uring_register',
  'mount',
  'umount2',
  'open_tree',
  'move_mount',
  'fsopen',
  'fsconfig',
  'fsmount',
  'fspick',
  'mount_setattr',
  'pivot_root',
  'chroot',
  'setns',
  'unshare',
  'kexec_load',
  'kexec_file_load',
  'init_module',
  'finit_module',
  'delete_module',
  'acct',
  'swapon',
  'swapoff',
  'reboot',
  'syslog',
  'name_to_handle_at',
  'open_by_handle_at',
  'settimeofday',
  'clock_settime',
  'clock_adjtime',
  'adjtimex',
  'quotactl',
  'sethostname',
  'setdomainname',
  // Newer mount-API calls, and calls that watch or compare what other processes do.
  'open_tree_attr',
  'listmount',
  'statmount',
  'fanotify_init',
  'fanotify_mark',
  'inotify_init',
  'inotify_init1',
  'inotify_add_watch',
  'memfd_secret',
  'modify_ldt',
  'kcmp',
] as const;

/** Denied syscalls some architectures do not have (arm64 has neither). */
export const ARCH_SPECIFIC_SYSCALLS: ReadonlySet<string> = new Set(['modify_ldt', 'inotify_init']);

/**
 * Syscalls numbered from here on are newer than this table (the last one reviewed is `file_setattr`, 469; from 424
 * on every architecture shares the numbers): the filter answers ENOSYS, as an older kernel would, rather than allow
 * what nobody reviewed.
 */
export const FIRST_UNKNOWN_SYSCALL = 470;

const common = {
  io_uring_setup: 425,
  io_uring_enter: 426,
  io_uring_register: 427,
  open_tree: 428,
  move_mount: 429,
  fsopen: 430,
  fsconfig: 431,
  fsmount: 432,
  fspick: 433,
  clone3: 435,
  pidfd_getfd: 438,
  mount_setattr: 442,
  memfd_secret: 447,
  statmount: 457,
  listmount: 458,
  open_tree_attr: 467,
};

const X86_64: SyscallTable = {
  auditArch: 0xc000003e,
  x32Bit: 0x40000000,
  nr: {
    ...common,
    ioctl: 16,
    personality: 135,
    modify_ldt: 154,
    prctl: 157,
    inotify_init: 253,
    inotify_add_watch: 254,
    inotify_init1: 294,
    fanotify_init: 300,
    fanotify_mark: 301,
    kcmp: 312,
    socket: 41,
    socketpair: 53,
    clone: 56,
    fork: 57,
    vfork: 58,
    ptrace: 101,
    syslog: 103,
    pivot_root: 155,
    adjtimex: 159,
    chroot: 161,
    acct: 163,
    settimeofday: 164,
    mount: 165,
    umount2: 166,
    swapon: 167,
    swapoff: 168,
    reboot: 169,
    sethostname: 170,
    setdomainname: 171,
    init_module: 175,
    delete_module: 176,
    quotactl: 179,
    clock_settime: 227,
    kexec_load: 246,
    add_key: 248,
    request_key: 249,
    keyctl: 250,
    unshare: 272,
    perf_event_open: 298,
    name_to_handle_at: 303,
    open_by_handle_at: 304,
    clock_adjtime: 305,
    setns: 308,
    process_vm_readv: 310,
    process_vm_writev: 311,
    finit_module: 313,
    kexec_file_load: 320,
    bpf: 321,
    userfaultfd: 323,
  },
};

/** The generic table (arm64 has no fork/vfork). */
const AARCH64: SyscallTable = {
  auditArch: 0xc00000b7,
  x32Bit: 0,
  nr: {
    ...common,
    inotify_init1: 26,
    inotify_add_watch: 27,
    ioctl: 29,
    umount2: 39,
    mount: 40,
    pivot_root: 41,
    chroot: 51,
    quotactl: 60,
    acct: 89,
    personality: 92,
    unshare: 97,
    kexec_load: 104,
    init_module: 105,
    delete_module: 106,
    clock_settime: 112,
    syslog: 116,
    ptrace: 117,
    reboot: 142,
    prctl: 167,
    sethostname: 161,
    setdomainname: 162,
    settimeofday: 170,
    adjtimex: 171,
    socket: 198,
    socketpair: 199,
    add_key: 217,
    request_key: 218,
    keyctl: 219,
    clone: 220,
    swapon: 224,
    swapoff: 225,
    perf_event_open: 241,
    name_to_handle_at: 264,
    open_by_handle_at: 265,
    clock_adjtime: 266,
    setns: 268,
    process_vm_readv: 270,
    process_vm_writev: 271,
    fanotify_init: 262,
    fanotify_mark: 263,
    kcmp: 272,
    finit_module: 273,
    bpf: 280,
    userfaultfd: 282,
    kexec_file_load: 294,
  },
};

/** The table for a Node `process.arch`, or undefined where no filter is generated. */
export function syscallTable(arch: string): SyscallTable | undefined {
  if (arch === 'x64') return X86_64;
  if (arch === 'arm64') return AARCH64;
  return undefined;
}
