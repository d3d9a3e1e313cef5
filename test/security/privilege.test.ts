import { lstat } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { describe } from 'vitest';
import { blockedIf, securitySuite, type CaseContext } from './harness/security-case.js';

const { securityCase, securityControl } = securitySuite();

type Results = { results: Record<string, number> };
const allRefused = (r: Results, keys?: string[]) =>
  Object.entries(r.results)
    .filter(([k]) => keys === undefined || keys.includes(k))
    .every(([, e]) => e !== 0);
const errnos = (r: Results, keys?: string[]) =>
  Object.entries(r.results)
    .filter(([k]) => keys === undefined || keys.includes(k))
    .map(([k, e]) => `${k}:${e}`)
    .join(' ');

interface Status {
  status: Record<string, string>;
  usr_mount_opts: string;
}
const status = (ctx: CaseContext, out?: string) =>
  ctx.probe<Status>(
    'status',
    out === undefined ? {} : { out },
    out === undefined ? {} : { plan: { writablePaths: [out] } },
  );

describe('privilege', () => {
  securityControl(
    { id: 'priv-control', category: 'privilege', title: 'the script runs, as the sandbox user' },
    async (ctx) => {
      const r = await status(ctx);
      return r.status.Uid?.split(/\s+/)[0] === String(ctx.h.probeResult.sandboxUid);
    },
  );

  securityCase(
    {
      id: 'priv-capabilities',
      category: 'privilege',
      title: 'every capability set is empty and no_new_privs is set',
    },
    async (ctx) => {
      const s = (await status(ctx)).status;
      const caps = ['CapInh', 'CapPrm', 'CapEff', 'CapBnd', 'CapAmb'].map((k) => s[k]);
      return blockedIf(
        caps.every((c) => c !== undefined && /^0+$/.test(c)) && s.NoNewPrivs === '1',
        `${caps.join('/')} NoNewPrivs=${s.NoNewPrivs}`,
      );
    },
  );

  securityCase(
    { id: 'priv-host-uid', category: 'privilege', title: 'files it creates are not owned by host root' },
    async (ctx) => {
      const out = await ctx.out();
      await status(ctx, out);
      const uid = (await lstat(join(out, 'owner-check'))).uid;
      return blockedIf(
        uid !== 0 || process.getuid?.() !== 0,
        `host owner uid ${uid}${process.getuid?.() === 0 ? ' (server is root; sandbox runs as 65534)' : ''}`,
      );
    },
  );

  securityCase(
    { id: 'priv-setuid', category: 'privilege', title: 'setuid-root binaries (mount) give no uid 0' },
    async (ctx) => {
      const out = await ctx.out();
      const r = await ctx.probe<{
        setuid_binaries: number;
        mount_rc: number | null;
        mounted: boolean;
        euid_after: number;
      }>('setuid', { out }, { plan: { writablePaths: [out] } });
      const s = await status(ctx);
      return blockedIf(
        !r.mounted && r.mount_rc !== 0 && s.usr_mount_opts.includes('nosuid'),
        `${r.setuid_binaries} setuid binaries; /usr is ${s.usr_mount_opts}; mount exit ${r.mount_rc}`,
      );
    },
  );

  securityCase(
    {
      id: 'priv-nested-userns',
      category: 'privilege',
      title: 'create nested user, mount or network namespaces, setns',
    },
    async (ctx) => {
      const r = await ctx.probe<Results>('userns');
      return blockedIf(allRefused(r), errnos(r));
    },
  );

  securityCase(
    { id: 'priv-mount-chroot', category: 'privilege', title: 'mount, pivot_root, chroot, umount' },
    async (ctx) => {
      const out = await ctx.out();
      const r = await ctx.probe<Results>('mount_syscalls', { out }, { plan: { writablePaths: [out] } });
      return blockedIf(allRefused(r), errnos(r));
    },
  );

  securityCase(
    { id: 'priv-tiocsti', category: 'privilege', title: 'inject input into a terminal (TIOCSTI)' },
    async (ctx) => {
      const r = await ctx.probe<Results>('tiocsti');
      return blockedIf(allRefused(r), `${errnos(r)} (seccomp; new session)`);
    },
  );

  securityCase(
    { id: 'priv-keyring', category: 'privilege', title: 'kernel keyrings (add_key, keyctl)' },
    async (ctx) => {
      const r = await ctx.probe<Results>('kernel_apis');
      const keys = ['add_key', 'keyctl(join session)'];
      return blockedIf(allRefused(r, keys), errnos(r, keys));
    },
  );

  securityCase(
    { id: 'priv-bpf-perf-uffd', category: 'privilege', title: 'bpf, perf_event_open, userfaultfd' },
    async (ctx) => {
      const r = await ctx.probe<Results>('kernel_apis');
      const keys = ['bpf(map_create)', 'perf_event_open', 'userfaultfd'];
      return blockedIf(allRefused(r, keys), errnos(r, keys));
    },
  );

  securityCase(
    { id: 'priv-ptrace', category: 'privilege', title: 'ptrace and process_vm_readv' },
    async (ctx) => {
      const r = await ctx.probe<Results>('ptrace');
      return blockedIf(allRefused(r), errnos(r));
    },
  );

  securityCase(
    { id: 'priv-sethostname', category: 'privilege', title: 'change the hostname' },
    async (ctx) => {
      const before = hostname();
      ctx.untouched('host name unchanged', () => hostname() === before);
      const r = await ctx.probe<{ errno: number; hostname: string }>('sethostname');
      return blockedIf(r.errno !== 0, `errno ${r.errno}; inside it is "${r.hostname}" (own uts namespace)`);
    },
  );
});
