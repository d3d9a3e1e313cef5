import { spawn, type StdioOptions } from 'node:child_process';
import { mkdir, open, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe } from 'vitest';
import { SkillsError } from '../../src/errors.js';
import { canaryProcess, canaryToken, sha256 } from './harness/host.js';
import { blockedIf, FORCED, FORCED_BWRAP, securitySuite } from './harness/security-case.js';

const { securityCase, securityControl } = securitySuite();

interface Scan {
  tokens: Record<string, string[]>;
  pid1_cmdline: string;
  pid1_is_self?: boolean;
}
const found = (scan: Scan, token: string, sources: string[]) =>
  sources.filter((s) => scan.tokens[s]?.includes(sha256(token)));

describe('secrets', () => {
  securityControl(
    { id: 'sec-control', category: 'secrets', title: 'an allow-listed env var reaches the script' },
    async (ctx) => {
      const token = canaryToken();
      const r = await ctx.probe<{ env: Record<string, string> }>(
        'hello',
        { keys: ['ALLOWED'] },
        { plan: { env: { ALLOWED: token } } },
      );
      return r.env.ALLOWED === token;
    },
  );

  securityCase(
    {
      id: 'sec-server-env',
      category: 'secrets',
      title: "a canary in the server's own env is absent everywhere inside",
    },
    async (ctx) => {
      const token = canaryToken();
      process.env.SKMCP_SERVER_SECRET = token;
      ctx.defer(() => {
        delete process.env.SKMCP_SERVER_SECRET;
      });
      const scan = await ctx.probe<Scan>('secret_scan');
      const where = found(scan, token, Object.keys(scan.tokens));
      return blockedIf(
        where.length === 0,
        'bwrap starts with an empty env; the script gets only the plan env',
      );
    },
  );

  securityCase(
    {
      id: 'sec-proc1-environ',
      category: 'secrets',
      title: "/proc/1/environ and the parent's environ hold no value",
    },
    async (ctx) => {
      const token = canaryToken();
      const scan = await ctx.probe<Scan>('secret_scan', {}, { plan: { env: { ALLOWED: token } } });
      // When the script is pid 1 (no bwrap process inside), /proc/1/environ is its own environment.
      const where = found(scan, token, [
        ...(scan.pid1_is_self === true ? [] : ['/proc/1/environ']),
        ...Object.keys(scan.tokens).filter(
          (k) => /^\/proc\/\d+\/environ$/.test(k) && k !== '/proc/self/environ' && k !== '/proc/1/environ',
        ),
      ]);
      return blockedIf(
        where.length === 0 && found(scan, token, ['env']).length === 1,
        scan.pid1_is_self === true
          ? 'the script is pid 1: no bwrap process inside; values travel on the --args pipe'
          : 'values are set through the --args pipe, not the env of bwrap',
      );
    },
  );

  securityCase(
    {
      id: 'sec-proc1-cmdline',
      category: 'secrets',
      title: '/proc/1/cmdline shows no env value or mount path',
    },
    async (ctx) => {
      const token = canaryToken();
      const pathToken = canaryToken();
      const dir = join(await ctx.h.dirs.make(), pathToken);
      await mkdir(dir);
      const scan = await ctx.probe<Scan>(
        'secret_scan',
        {},
        { plan: { env: { ALLOWED: token }, readOnlyPaths: [ctx.h.skill, dir] } },
      );
      const where = [
        ...found(scan, token, ['/proc/1/cmdline']),
        ...found(scan, pathToken, ['/proc/1/cmdline']),
      ];
      return blockedIf(where.length === 0, `pid 1 is "${scan.pid1_cmdline}" with options on a pipe (--args)`);
    },
  );

  securityCase(
    {
      id: 'sec-inherited-fd',
      category: 'secrets',
      title: 'a non-CLOEXEC fd left open by the server does not reach the script',
    },
    async (ctx) => {
      const dir = await ctx.h.dirs.make();
      const token = canaryToken();
      const file = join(dir, 'fd-canary');
      await writeFile(file, token);
      const fh = await open(file, 'r');
      ctx.defer(() => fh.close());
      const plan = ctx.plan('fd_scan');
      const stdio: StdioOptions = ['pipe', 'pipe', 'pipe', ...Array<'ignore'>(17).fill('ignore'), fh.fd];
      const child = spawn(
        process.execPath,
        [fileURLToPath(new URL('./harness/fd-server.mjs', import.meta.url))],
        { stdio },
      );
      child.stdin!.end(
        JSON.stringify({
          plan: { ...plan, stdin: Buffer.from(plan.stdin ?? []).toString('base64') },
          ...(FORCED ? { bwrapCandidates: FORCED_BWRAP } : {}),
        }),
      );
      let out = '';
      child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
      await new Promise((r) => child.on('close', r));
      const res = JSON.parse(out) as {
        code?: string;
        message?: string;
        canaryFdOpen?: boolean;
        stdout?: string;
      };
      if (res.code !== undefined) throw new SkillsError(res.code as 'SANDBOX_DENIED', res.message ?? '');
      if (res.canaryFdOpen !== true)
        throw new Error('harness: the server process did not hold the canary fd');
      const fds = (
        JSON.parse(res.stdout ?? '{}') as {
          fds: Record<string, { target_is_canary: boolean; tokens?: string[] }>;
        }
      ).fds;
      const leaked = Object.values(fds).some((f) => f.target_is_canary || f.tokens?.includes(sha256(token)));
      const extra = Object.keys(fds).filter((n) => Number(n) > 3);
      return blockedIf(
        !leaked && extra.length === 0,
        `open fds inside: ${Object.keys(fds).join(',')} (the launcher closes every inherited fd before bwrap)`,
      );
    },
  );

  securityCase(
    { id: 'sec-host-pids', category: 'secrets', title: 'host processes are not visible in /proc' },
    async (ctx) => {
      const p = canaryProcess();
      ctx.defer(() => p.stop());
      const r = await ctx.probe<{ count: number; host_pid_visible: boolean }>('pids', { host_pid: p.pid });
      return blockedIf(!r.host_pid_visible && r.count < 10, `${r.count} pids visible (own pid namespace)`);
    },
  );

  securityCase(
    { id: 'sec-signal-host', category: 'secrets', title: 'cannot signal a host process (kill pid, kill -1)' },
    async (ctx) => {
      const p = canaryProcess();
      ctx.defer(() => p.stop());
      ctx.untouched('host canary process alive', () => p.alive());
      await ctx.probe('signal', { pid: p.pid });
      return blockedIf(p.alive(), 'pid namespace: the host pid does not exist inside');
    },
  );

  securityCase(
    { id: 'sec-host-tmp', category: 'secrets', title: "files in the host's /tmp are not visible" },
    async (ctx) => {
      const token = canaryToken();
      const name = `skmcp-host-tmp-${token.slice(-8)}`;
      await writeFile(join(tmpdir(), name), token, { mode: 0o644 });
      ctx.defer(() => rm(join(tmpdir(), name), { force: true }));
      const r = await ctx.probe<{ files: Array<{ readable: boolean }> }>('read', { paths: [`/tmp/${name}`] });
      return blockedIf(
        r.files.every((f) => !f.readable),
        '/tmp is a private tmpfs',
      );
    },
  );
});
