import { describe, expect, it } from 'vitest';
import { buildSeccompFilter, seccompProgram } from '../../src/sandbox/seccomp-filter.js';
import { DENIED_SYSCALLS, FIRST_UNKNOWN_SYSCALL, syscallTable } from '../../src/sandbox/syscall-table.js';

/** A classic-BPF evaluator for the subset the generator emits (ld abs, jeq/jge/jset k, ret k). */
function evaluate(prog: Buffer, data: { nr: number; arch: number; args?: number[] }): number {
  const mem = Buffer.alloc(64);
  mem.writeInt32LE(data.nr, 0);
  mem.writeUInt32LE(data.arch, 4);
  (data.args ?? []).forEach((a, i) => mem.writeUInt32LE(a >>> 0, 16 + 8 * i));
  let a = 0;
  for (let pc = 0; pc < prog.length / 8;) {
    const code = prog.readUInt16LE(pc * 8);
    const jt = prog.readUInt8(pc * 8 + 2);
    const jf = prog.readUInt8(pc * 8 + 3);
    const k = prog.readUInt32LE(pc * 8 + 4);
    if (code === 0x20) a = mem.readUInt32LE(k);
    else if (code === 0x06) return k;
    else {
      const hit = code === 0x15 ? a === k : code === 0x35 ? a >= k : code === 0x45 ? (a & k) !== 0 : NaN;
      if (Number.isNaN(hit)) throw new Error(`unknown opcode ${code}`);
      pc += hit ? jt : jf;
    }
    pc++;
  }
  throw new Error('fell off the end');
}

const x64 = syscallTable('x64')!;
const ALLOW = 0x7fff0000;
const errno = (n: number) => 0x00050000 | n;
const run = (prog: Buffer, name: string, args: number[] = []) =>
  evaluate(prog, { nr: x64.nr[name] ?? -1, arch: x64.auditArch, args });

describe('seccomp filter (x86_64)', () => {
  const prog = seccompProgram(x64, { allowSpawn: true });
  const noSpawn = seccompProgram(x64, { allowSpawn: false });

  it('fits classic BPF limits', () => {
    expect(prog.length % 8).toBe(0);
    expect(prog.length / 8).toBeLessThan(256);
  });

  it.each(DENIED_SYSCALLS.map((s) => [s]))('denies %s with EPERM', (name) => {
    expect(run(prog, name)).toBe(errno(1));
  });

  it('allows ordinary syscalls', () => {
    expect(evaluate(prog, { nr: 0, arch: x64.auditArch })).toBe(ALLOW); // read
    expect(evaluate(prog, { nr: 59, arch: x64.auditArch })).toBe(ALLOW); // execve
  });

  it.each([
    ['AF_UNIX', 1, ALLOW],
    ['AF_INET', 2, ALLOW],
    ['AF_INET6', 10, ALLOW],
    ['AF_NETLINK', 16, ALLOW],
    ['AF_PACKET', 17, errno(97)],
    ['AF_VSOCK', 40, errno(97)],
    ['AF_ALG', 38, errno(97)],
  ])('socket(%s) → %d', (_n, family, expected) => {
    expect(run(prog, 'socket', [family])).toBe(expected);
  });

  it('refuses TIOCSTI and TIOCLINUX but allows other ioctls', () => {
    expect(run(prog, 'ioctl', [1, 0x5412])).toBe(errno(1));
    expect(run(prog, 'ioctl', [1, 0x541c])).toBe(errno(1));
    expect(run(prog, 'ioctl', [1, 0x5401])).toBe(ALLOW); // TCGETS
  });

  it('refuses namespace flags in clone, makes clone3 fall back, and refuses the x32 ABI', () => {
    expect(run(prog, 'clone', [0x10000000])).toBe(errno(1)); // CLONE_NEWUSER
    expect(run(prog, 'clone', [0x01200011])).toBe(ALLOW); // fork-like clone
    expect(run(prog, 'clone3')).toBe(errno(38));
    expect(evaluate(prog, { nr: 0x40000000 + 41, arch: x64.auditArch })).toBe(errno(38));
  });

  it('kills calls through another ABI (i386 int 0x80)', () => {
    expect(evaluate(prog, { nr: 1, arch: 0x40000003 })).toBe(0x80000000);
  });

  it('answers ENOSYS for every syscall newer than the table', () => {
    expect(evaluate(prog, { nr: FIRST_UNKNOWN_SYSCALL, arch: x64.auditArch })).toBe(errno(38));
    expect(evaluate(prog, { nr: 1000, arch: x64.auditArch })).toBe(errno(38));
    expect(evaluate(prog, { nr: FIRST_UNKNOWN_SYSCALL - 1, arch: x64.auditArch })).toBe(ALLOW); // file_setattr
  });

  it('lets prctl set only SIGKILL as the parent-death signal', () => {
    expect(run(prog, 'prctl', [1, 9])).toBe(ALLOW);
    expect(run(prog, 'prctl', [1, 0])).toBe(errno(1));
    expect(run(prog, 'prctl', [1, 15])).toBe(errno(1));
    expect(run(prog, 'prctl', [15, 0])).toBe(ALLOW); // PR_SET_NAME
  });

  it('allows only the default persona and the personality query', () => {
    expect(run(prog, 'personality', [0])).toBe(ALLOW);
    expect(run(prog, 'personality', [0xffffffff])).toBe(ALLOW);
    expect(run(prog, 'personality', [0x0040000])).toBe(errno(1)); // ADDR_NO_RANDOMIZE
    expect(run(prog, 'personality', [0x0400000])).toBe(errno(1)); // READ_IMPLIES_EXEC
  });

  it('without spawning: threads yes, processes no', () => {
    expect(run(noSpawn, 'clone', [0x003d0f00])).toBe(ALLOW); // pthread_create flags include CLONE_THREAD
    expect(run(noSpawn, 'clone', [0x01200011])).toBe(errno(1));
    expect(run(noSpawn, 'fork')).toBe(errno(1));
    expect(run(noSpawn, 'vfork')).toBe(errno(1));
    expect(run(prog, 'fork')).toBe(ALLOW);
  });
});

describe('buildSeccompFilter', () => {
  it('builds for x64 and arm64, and for nothing else', () => {
    expect(buildSeccompFilter('x64', { allowSpawn: true })).toBeInstanceOf(Buffer);
    const arm = buildSeccompFilter('arm64', { allowSpawn: false })!;
    const a64 = syscallTable('arm64')!;
    expect(evaluate(arm, { nr: a64.nr.unshare!, arch: a64.auditArch })).toBe(errno(1));
    expect(evaluate(arm, { nr: a64.nr.inotify_init1!, arch: a64.auditArch })).toBe(errno(1));
    expect(evaluate(arm, { nr: a64.nr.fanotify_init!, arch: a64.auditArch })).toBe(errno(1));
    expect(buildSeccompFilter('ia32', { allowSpawn: true })).toBeUndefined();
  });
});
