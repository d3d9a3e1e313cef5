import { describe, expect, it } from 'vitest';
import { bwrapArgs, encodeArgs, groupFile, orderBinds, passwdFile } from '../../src/sandbox/bwrap-args.js';
import type { HostLayout } from '../../src/sandbox/host-layout.js';
import {
  FD,
  GATE_SCRIPT,
  LAUNCHER_SCRIPT,
  launchData,
  launcherSpec,
  WAITER_SCRIPT,
} from '../../src/sandbox/launcher.js';
import { BASH, NPROC_SCRIPT, nprocArgv, SHIM_SCRIPT, shimArgv } from '../../src/sandbox/shim.js';

const layout: HostLayout = {
  symlinks: [
    ['usr/bin', '/bin'],
    ['usr/lib', '/lib'],
  ],
  systemDirs: ['/usr'],
  etc: ['/etc/ld.so.cache'],
  etcNetwork: ['/etc/resolv.conf'],
  hiddenProc: ['/proc/cmdline'],
};

const base = {
  layout,
  network: 'none' as const,
  binds: [],
  tmpfsBytes: 1024,
  cwd: '/work/out',
  env: { B: '2', A: '1' },
  fds: { passwd: 5, group: 6, hosts: 7, seccomp: 8 },
};

/** The value following `flag` (first occurrence). */
const after = (a: string[], flag: string) => a[a.indexOf(flag) + 1];

describe('bwrapArgs', () => {
  it('applies every isolation flag of the recipe', () => {
    const a = bwrapArgs(base);
    for (const f of [
      '--unshare-all',
      '--unshare-user',
      '--disable-userns',
      '--die-with-parent',
      '--as-pid-1',
      '--new-session',
    ]) {
      expect(a).toContain(f);
    }
    expect(after(a, '--cap-drop')).toBe('ALL');
    expect(after(a, '--hostname')).toBe('sandbox');
    expect(a).not.toContain('--share-net');
    expect(after(a, '--seccomp')).toBe('8');
  });

  it('keeps the command out of the options (bwrap ignores a command inside --args)', () => {
    expect(bwrapArgs(base)).not.toContain('--');
  });

  it('mounts an allow-list, never the host root', () => {
    const a = bwrapArgs(base);
    const binds = a.flatMap((x, i) => (/^--(ro-)?bind/.test(x) ? [a[i + 1]] : []));
    expect(binds).toEqual(['/usr', '/etc/ld.so.cache', '/dev/null']);
    expect(a.join(' ')).toContain('--symlink usr/bin /bin');
    expect(a.join(' ')).toContain('--file 5 /etc/passwd');
    expect(a.join(' ')).toContain('--file 7 /etc/hosts');
  });

  it('sizes /tmp and /dev/shm, and remounts / and /dev read-only after the binds', () => {
    const a = bwrapArgs({ ...base, binds: [{ src: '/s', dest: '/s', write: false }] });
    const s = a.join(' ');
    expect(s).toContain('--size 1024 --tmpfs /tmp');
    expect(s).toContain('--size 1024 --tmpfs /dev/shm');
    expect(a.lastIndexOf('--remount-ro')).toBeGreaterThan(a.indexOf('/s'));
    expect(s).toContain('--remount-ro /dev --remount-ro /');
  });

  it('leaves no pseudo-terminals and hides host details in /proc', () => {
    const s = bwrapArgs(base).join(' ');
    expect(s).toContain('--tmpfs /dev/pts --remount-ro /dev/pts');
    expect(s).toContain('--proc /proc --ro-bind /dev/null /proc/cmdline');
  });

  it('shares the host network and resolver files only for network: full', () => {
    const a = bwrapArgs({ ...base, network: 'full', fds: { passwd: 5, group: 6 } });
    expect(a).toContain('--share-net');
    expect(a).toContain('/etc/resolv.conf');
    expect(a.join(' ')).not.toContain('/etc/hosts');
  });

  it('passes env only through --clearenv and sorted --setenv', () => {
    const s = bwrapArgs(base).join(' ');
    expect(s).toContain('--clearenv --setenv A 1 --setenv B 2');
  });

  it('orders binds parents first so protected subpaths land on top', () => {
    const ordered = orderBinds([
      { src: '/w/.git/hooks', dest: '/w/.git/hooks', write: false },
      { src: '/w', dest: '/w', write: true },
      { src: '/w/.git/config', dest: '/w/.git/config', write: false },
    ]);
    expect(ordered.map((b) => b.dest)).toEqual(['/w', '/w/.git/config', '/w/.git/hooks']);
  });

  it('synthesizes one-user passwd and group files', () => {
    expect(passwdFile(65534, 65534)).toBe('sandbox:x:65534:65534:sandbox:/tmp:/usr/sbin/nologin\n');
    expect(passwdFile(1000, 1000).split('\n')[1]).toMatch(/^nobody:x:65534:/);
    expect(groupFile(1000)).toBe('sandbox:x:1000:\nnogroup:x:65534:\n');
  });

  it('encodes options NUL-terminated', () => {
    expect(encodeArgs(['--a', 'b c']).toString()).toBe('--a\0b c\0');
  });
});

describe('shimArgv and nprocArgv', () => {
  it('run constant scripts with limits and argv as positional parameters', () => {
    const a = shimArgv({ openFiles: 64, cpuSeconds: 5, fileSizeMiB: 2 }, [
      '/usr/bin/python3',
      '$(id)',
      '; rm',
    ]);
    expect(a.slice(0, 7)).toEqual(['/bin/bash', '--norc', '--noprofile', '-p', '-c', SHIM_SCRIPT, 'bash']);
    expect(a.slice(7)).toEqual(['64', '5', '2048', '', '/usr/bin/python3', '$(id)', '; rm']);
    expect(nprocArgv(32, ['/x']).slice(-4)).toEqual([NPROC_SCRIPT, 'bash', '32', '/x']);
  });
});

describe('launcher', () => {
  const input = {
    bwrap: '/usr/bin/bwrap',
    options: ['--opt'],
    payload: ['/bin/true', 'a b'],
    limits: { openFiles: 64, cpuSeconds: 5, fileSizeMiB: 1 },
    files: { passwd: 'p', group: 'g' },
  };
  const control = (d: Map<number, Buffer>) => d.get(FD.control)!.toString().split('\0').slice(0, -1);

  it('is spawned as bash with an empty env, its cgroup fds at 3 and 4, and eleven pipes', () => {
    const s = launcherSpec([40, 41]);
    expect([s.command, ...s.args]).toEqual([
      '/bin/bash',
      '--norc',
      '--noprofile',
      '-p',
      '-c',
      LAUNCHER_SCRIPT,
      'skills-mcp-launcher',
    ]);
    expect(s.env).toEqual({});
    expect(s.extraFds).toEqual([
      { fd: 40 },
      { fd: 41 },
      'pipe',
      'pipe',
      'pipe',
      'pipe',
      'pipe',
      'pipe',
      'pipe',
      'pipe',
      'pipe',
      'pipe',
      'pipe',
    ]);
  });

  it('tells the launcher which fds to keep, the rlimits, and the chain to exec, the gate first inside', () => {
    const d = launchData(input);
    expect(control(d)).toEqual([
      '3,4,7,9,10,12,15',
      '64',
      '5',
      '1024',
      '',
      '/usr/bin/bwrap',
      '--args',
      '7',
      '--',
      '/bin/sh',
      '-c',
      GATE_SCRIPT,
      'skills-mcp-gate',
      '/bin/true',
      'a b',
    ]);
    expect(d.get(FD.args)!.toString()).toBe('--opt\0');
    expect(d.get(FD.passwd)!.toString()).toBe('p');
  });

  it('drops a root server to 65534 with setpriv before bwrap, from the root launcher, which waits for it', () => {
    const d = launchData({ ...input, dropTo: { uid: 65534, gid: 65534, setpriv: '/usr/bin/setpriv' } });
    expect(control(d).slice(5, 11)).toEqual([
      '--wait',
      '/usr/bin/setpriv',
      '--reuid=65534',
      '--regid=65534',
      '--clear-groups',
      '--',
    ]);
  });

  it('stages as root, then drops to 65534 before the real sandbox', () => {
    const d = launchData({
      ...input,
      seccomp: Buffer.from([1]),
      files: { passwd: 'p', group: 'g', hosts: 'h' },
      dropTo: { uid: 65534, gid: 65534, setpriv: '/usr/bin/setpriv' },
      stage: { dir: '/tmp/st', outer: [{ src: '/root/p', dest: '/tmp/st/0', write: false }] },
    });
    expect(control(d)).toEqual([
      '3,4,6,7,8,9,10,11,12,15',
      '64',
      '5',
      '1024',
      '',
      '/usr/bin/bwrap',
      '--args',
      '6',
      '--',
      ...BASH,
      WAITER_SCRIPT,
      'skills-mcp-waiter',
      '/usr/bin/setpriv',
      '--reuid=65534',
      '--regid=65534',
      '--clear-groups',
      '--',
      '/usr/bin/bwrap',
      '--args',
      '7',
      '--',
      '/bin/sh',
      '-c',
      GATE_SCRIPT,
      'skills-mcp-gate',
      '/bin/true',
      'a b',
    ]);
    expect(d.get(FD.stager)!.toString().split('\0')).toEqual([
      '--dev-bind',
      '/',
      '/',
      '--size',
      '65536',
      '--tmpfs',
      '/tmp/st',
      '--ro-bind',
      '/root/p',
      '/tmp/st/0',
      '--die-with-parent',
      '',
    ]);
  });
});
