/**
 * Attacks found by a review past the first matrix: planting code the host runs at its next `git`, outliving the
 * run, reading host network details through stdio, watching host activity, taking another run's per-user kernel
 * quotas, and syscalls newer than the filter.
 */
import { execFile } from 'node:child_process';
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { networkInterfaces, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe } from 'vitest';
import { removeTree } from '../../src/sandbox/remove-tree.js';
import { canaryToken, exists, sha256, treeHash } from './harness/host.js';
import {
  blocked,
  blockedIf,
  breach,
  FORCED,
  securitySuite,
  type CaseContext,
} from './harness/security-case.js';

const { securityCase, securityControl } = securitySuite();

/**
 * Git, reading configuration only (never a command that runs hooks or fsmonitor), with no system or user config
 * and no discovery above the workspace's parent.
 */
function gitRead(cwd: string, args: string[]): Promise<{ code: number; out: string }> {
  return new Promise((resolve) => {
    execFile(
      'git',
      args,
      {
        cwd,
        env: {
          PATH: '/usr/bin:/bin',
          HOME: dirname(cwd),
          GIT_CONFIG_NOSYSTEM: '1',
          GIT_CONFIG_GLOBAL: '/dev/null',
          GIT_CEILING_DIRECTORIES: dirname(cwd),
        },
      },
      (err, stdout) => resolve({ code: err === null ? 0 : Number(err.code ?? 1), out: stdout.trim() }),
    );
  });
}

/** A workspace that is a git repository, made on the host. */
async function gitWorkspace(ctx: CaseContext): Promise<string> {
  const ws = await ctx.h.dirs.make('skills-mcp-sec-ws-', 0o777);
  const init = await gitRead(ws, ['init', '-q', '.']);
  if (init.code !== 0) throw new Error('git init failed');
  await writeFile(join(ws, 'README'), 'workspace\n');
  return ws;
}

const size = async (p: string) => (await readFile(p).catch(() => Buffer.alloc(0))).length;
/** The heartbeat file stopped growing (sampled over a generous interval; not a timing assertion). */
async function stopped(p: string): Promise<boolean> {
  const a = await size(p);
  await sleep(1000);
  return a > 0 && (await size(p)) === a;
}

describe('found past the first matrix', () => {
  securityControl(
    {
      id: 'fs-workspace-control',
      category: 'filesystem',
      title: 'a run that may write the workspace changes an ordinary file there',
    },
    async (ctx) => {
      const ws = await gitWorkspace(ctx);
      const token = canaryToken();
      const r = await ctx.probe<{ results: Record<string, number> }>(
        'workspace_plant',
        { workspace: ws, command: 'false', token },
        { plan: { workspace: { path: ws, write: true } } },
      );
      return r.results['ordinary file'] === 0 && (await readFile(join(ws, 'applied.txt'), 'utf8')) === token;
    },
  );

  securityCase(
    {
      id: 'fs-workspace-git',
      category: 'filesystem',
      title:
        'workspace write: .git/commondir, a renamed .git, a nested repo, .envrc (code for the next host git)',
    },
    async (ctx) => {
      const ws = await gitWorkspace(ctx);
      const ran = join(ctx.h.canaryDir, 'fsmonitor-ran');
      const gitBefore = await treeHash(join(ws, '.git'));
      ctx.untouched('the fsmonitor command never ran', async () => !(await exists(ran)));
      const r = await ctx.probe<{ results: Record<string, number> }>(
        'workspace_plant',
        { workspace: ws, command: `touch ${ran}`, token: 'x' },
        { plan: { workspace: { path: ws, write: true } } },
      );
      const common = await gitRead(ws, ['rev-parse', '--git-common-dir']);
      const fsmonitor = await gitRead(ws, ['config', '--show-origin', '--get', 'core.fsmonitor']);
      const nested = await gitRead(ws, ['-C', 'sub', 'rev-parse', '--show-toplevel']);
      const planted = [
        common.out !== '.git' && `git-common-dir is ${common.out}`,
        fsmonitor.code === 0 && `core.fsmonitor set: ${fsmonitor.out}`,
        nested.code === 0 && nested.out !== ws && `sub/ is its own repository`,
        (await treeHash(join(ws, '.git'))) !== gitBefore && '.git changed',
        (await exists(join(ws, '.git-orig'))) && '.git renamed',
        (await exists(join(ws, '.envrc'))) && '.envrc created',
        (await exists(join(ws, 'hooks'))) && 'symlink created',
      ].filter((x): x is string => typeof x === 'string');
      if (planted.length > 0) return breach(planted.join('; '));
      const tried = Object.entries(r.results)
        .map(([k, e]) => `${k}:${e}`)
        .join(' ');
      return blocked(`host git reads .git, no fsmonitor, nothing planted (inside: ${tried})`);
    },
  );

  /** Writes `files` into a writable copy of `ws`; returns the host paths that exist afterwards among `judged`. */
  async function writeWorkspace(
    ctx: CaseContext,
    ws: string,
    files: Record<string, string>,
    judged: string[],
  ) {
    const token = canaryToken();
    const r = await ctx.probe<{ results: Record<string, number> }>(
      'workspace_write',
      { workspace: ws, files: { ...files, 'applied.txt': token } },
      { plan: { workspace: { path: ws, write: true } } },
    );
    // An ordinary file still reaches the host: the run wrote and the server applied.
    if ((await readFile(join(ws, 'applied.txt'), 'utf8').catch(() => '')) !== token)
      throw new Error('the ordinary file was not applied');
    const present: string[] = [];
    for (const rel of judged) if (await exists(join(ws, rel))) present.push(JSON.stringify(rel));
    const wrote = Object.values(r.results).filter((e) => e === 0).length;
    return { present, wrote };
  }

  securityCase(
    {
      id: 'fs-workspace-fold',
      category: 'filesystem',
      title:
        'workspace write: .GIT, .Envrc, .git., .g\u200cit, GIT~1 (.git and .envrc on case-insensitive filesystems)',
    },
    async (ctx) => {
      const ws = await gitWorkspace(ctx);
      const ran = join(ctx.h.canaryDir, 'fold-ran');
      ctx.untouched('no planted command ran', async () => !(await exists(ran)));
      const cfg = `[core]\n\tfsmonitor = "touch ${ran}"\n`;
      const files: Record<string, string> = {
        '.GIT/commondir': '../.evil\n',
        '.Git/hooks/post-checkout': `#!/bin/sh\ntouch ${ran}\n`,
        '.git./config': cfg,
        '.g\u200cit/config': cfg,
        'GIT~1/config': cfg,
        '.Envrc': `touch ${ran}\n`,
        'sub/.GIT': 'gitdir: ../.evil\n',
        '.VSCode/tasks.json': '{}\n',
        '.evil/config': cfg,
      };
      const judged = Object.keys(files).filter((f) => f !== '.evil/config');
      const { present, wrote } = await writeWorkspace(ctx, ws, files, judged);
      if (present.length > 0) return breach(`applied to the host: ${present.join(', ')}`);
      return blocked(`${wrote} files written in the copy; none of the folded names reached the host`);
    },
  );

  securityCase(
    {
      id: 'fs-workspace-hooks',
      category: 'filesystem',
      title: 'workspace write: an executable hook in core.hooksPath, husky, pre-commit, lefthook, .lfsconfig',
    },
    async (ctx) => {
      const ws = await gitWorkspace(ctx);
      const ran = join(ctx.h.canaryDir, 'hook-ran');
      ctx.untouched('no planted command ran', async () => !(await exists(ran)));
      if ((await gitRead(ws, ['config', 'core.hooksPath', '.githooks'])).code !== 0)
        throw new Error('git config failed');
      const hook = join(ws, '.githooks', 'pre-commit');
      await mkdir(dirname(hook));
      await writeFile(hook, '#!/bin/sh\nexit 0\n', { mode: 0o755 });
      const before = sha256(await readFile(hook));
      const cmd = `touch ${ran}`;
      const files: Record<string, string> = {
        '.husky/pre-commit': `${cmd}\n`,
        '.pre-commit-config.yaml': `repos: [{repo: local, hooks: [{id: x, name: x, entry: "${cmd}", language: system}]}]\n`,
        'lefthook.yml': `pre-commit:\n  commands:\n    x:\n      run: ${cmd}\n`,
        '.lfsconfig': '[lfs]\n\turl = http://127.0.0.1:9/\n',
      };
      const { present, wrote } = await writeWorkspace(
        ctx,
        ws,
        { ...files, '.githooks/pre-commit': `#!/bin/sh\n${cmd}\n` },
        Object.keys(files),
      );
      const hooksPath = (await gitRead(ws, ['config', '--get', 'core.hooksPath'])).out;
      if (sha256(await readFile(hook)) !== before) present.push(`${hooksPath}/pre-commit rewritten`);
      if (present.length > 0) return breach(`for the next git commit: ${present.join(', ')}`);
      return blocked(
        `${wrote} files written in the copy; the hook (core.hooksPath=${hooksPath}) and hook-manager settings unchanged on the host`,
      );
    },
  );

  securityCase(
    {
      id: 'fs-workspace-kill-race',
      category: 'filesystem',
      title: 'processes still swapping folders for links when a killed run is applied and its copy removed',
    },
    async (ctx) => {
      const target = await ctx.h.dirs.make('skills-mcp-sec-target-', 0o777);
      const token = canaryToken();
      await writeFile(join(target, 'secret'), token);
      await writeFile(join(target, 'victim'), 'keep');
      ctx.untouched('the host folder the links point to keeps its files', async () => {
        return (await exists(join(target, 'secret'))) && (await exists(join(target, 'victim')));
      });
      const dirs = 8;
      const walkErrors: string[] = [];
      for (let attempt = 0; attempt < 3; attempt++) {
        const ws = await ctx.h.dirs.make('skills-mcp-sec-ws-', 0o777);
        const r = await ctx
          .run(
            'swap_on_kill',
            { workspace: ws, target, dirs },
            { plan: { workspace: { path: ws, write: true }, limits: { wallTimeMs: 3000 } } },
          )
          .catch((e: unknown) => {
            if (FORCED) throw e;
            return e as Error;
          });
        if (r instanceof Error) {
          // The copy changed under the server's walk: a process of the run was still there.
          if (await exists(join(target, 'victim'))) walkErrors.push(r.message);
          else return breach('removing the copy deleted a host file through a link');
          continue;
        }
        if (!r.stdout.toString().includes('started'))
          throw new Error(`swap_on_kill did not start: ${r.stderr.toString().slice(-300)}`);
        for (let i = 0; i < dirs; i++) {
          const got = await readFile(join(ws, `d${i}`, 'secret'), 'utf8').catch(() => '');
          if (got === token)
            return breach(`the server read the host secret through a link into d${i}/secret`);
        }
        if (!(await exists(join(target, 'victim'))))
          return breach('removing the copy deleted a host file through a link');
      }
      if (walkErrors.length > 0)
        return breach(
          `the server walked the copy while the run's processes still changed it: ${walkErrors.join('; ')}`,
        );
      return blocked('3 killed runs: the copy was applied and removed only after every process had exited');
    },
  );

  securityCase(
    {
      id: 'res-workspace-deep',
      category: 'resources',
      title: 'nest folders past PATH_MAX in the workspace copy so it stays on the host disk',
    },
    async (ctx) => {
      const ws = await ctx.h.dirs.make('skills-mcp-sec-ws-', 0o777);
      const marker = `marker-${canaryToken()}`;
      const copies = async () => {
        const found: string[] = [];
        for (const n of await readdir(tmpdir()))
          if (n.startsWith('skills-mcp-ws-') && (await exists(join(tmpdir(), n, marker)))) found.push(n);
        return found;
      };
      const r = await ctx
        .probe<{ depth_bytes: number }>(
          'workspace_deep',
          { workspace: ws, marker },
          { plan: { workspace: { path: ws, write: true } } },
        )
        .catch((e: unknown) => {
          if (FORCED) throw e;
          return e as Error;
        });
      const left = await copies();
      for (const n of left) ctx.defer(() => removeTree(join(tmpdir(), n)));
      if (left.length > 0) return breach(`the copy stayed in ${tmpdir()} after the run`);
      if (r instanceof Error) throw r;
      return blocked(`a ${r.depth_bytes}-byte deep copy was removed after the run`);
    },
  );

  async function outlive(ctx: CaseContext, hang: boolean) {
    const out = await ctx.out();
    const beat = join(out, 'beat');
    const r = await ctx.run(
      'outlive',
      { beat, hang },
      { plan: { writablePaths: [out], limits: { wallTimeMs: hang ? 2000 : 20_000 } } },
    );
    if (!r.stdout.toString().includes('started'))
      throw new Error(`outlive probe did not start: ${r.stderr.toString()}`);
    await sleep(500); // the run has returned: give a survivor time to show
    return { r, quiet: await stopped(beat), detail: r.stdout.toString().trim().split('\n').pop() ?? '' };
  }

  securityCase(
    {
      id: 'res-outlive-init',
      category: 'resources',
      title: "a child outlives the run by rewriting the sandbox's pid 1 through /proc/1/mem",
    },
    async (ctx) => {
      const { r, quiet, detail } = await outlive(ctx, false);
      const what = quiet
        ? 'no process left writing after the run'
        : 'a process kept writing after the run returned';
      return blockedIf(quiet, `exit ${r.exitCode}; ${what} (${detail})`);
    },
  );

  securityCase(
    {
      id: 'res-outlive-deathsig',
      category: 'resources',
      title: 'pid 1 clears its parent-death signal and hangs past the wall-clock limit',
    },
    async (ctx) => {
      const { r, quiet } = await outlive(ctx, true);
      return blockedIf(
        r.timedOut && quiet,
        `timedOut=${r.timedOut}; ${quiet ? 'the tree is gone after the kill' : 'pid 1 survived the kill'}`,
      );
    },
  );

  securityCase(
    {
      id: 'net-stdio-ioctl',
      category: 'network',
      title: "socket ioctls on stdio (SIOCGIFCONF on fd 0–2) list the host's interfaces",
    },
    async (ctx) => {
      const hostOnly = Object.keys(networkInterfaces()).filter((n) => n !== 'lo');
      const r = await ctx.probe<{ fds: Record<string, { socket: boolean; names?: string[] }> }>(
        'stdio_ioctl',
      );
      const seen = Object.values(r.fds).flatMap((f) => f.names ?? []);
      const leaked = seen.filter((n) => hostOnly.includes(n));
      if (leaked.length > 0) return breach(`host interfaces seen: ${leaked.join(', ')}`);
      const sockets = Object.entries(r.fds).filter(([, f]) => f.socket);
      return blockedIf(
        sockets.length === 0,
        sockets.length === 0
          ? 'fds 0–2 are pipes'
          : `fds ${sockets.map(([k]) => k).join(',')} are host sockets`,
      );
    },
  );

  securityCase(
    {
      id: 'priv-watch-host',
      category: 'privilege',
      title: 'inotify/fanotify on a read-only host mount report what host processes open',
    },
    async (ctx) => {
      const watched = join(ctx.h.skill, 'watched');
      await mkdir(watched, { recursive: true });
      const name = `host-activity-${sha256(canaryToken()).slice(0, 12)}`;
      await writeFile(join(watched, name), 'host reads this\n');
      let running = true;
      const reader = (async () => {
        while (running) {
          await readFile(join(watched, name));
          await sleep(50);
        }
      })();
      ctx.defer(async () => {
        running = false;
        await reader;
      });
      const r = await ctx.probe<{ events: string[]; inotify_init1: number; fanotify_init: number }>(
        'watch_host',
        { dir: watched, seconds: 2 },
      );
      if (r.events.includes(name)) return breach('the script saw the host open and read a file');
      return blockedIf(
        r.fanotify_init !== 0,
        `inotify_init1:${r.inotify_init1} fanotify_init:${r.fanotify_init}; no host activity seen`,
      );
    },
  );

  securityCase(
    {
      id: 'res-user-quotas',
      category: 'resources',
      title: "one run takes every inotify instance and pty of the user: another run's share",
    },
    async (ctx) => {
      type Hog = { got: { inotify: number; pty: number }; errno: Record<string, number> };
      const hog = ctx.probe<Hog>('hog', { max: 256, hold: 4 }, { plan: { limits: { wallTimeMs: 20_000 } } });
      hog.catch(() => undefined); // awaited below; a refusal must not surface as unhandled meanwhile
      await sleep(1500);
      const other = await ctx.probe<Hog>('hog', { max: 1, hold: 0 });
      const first = await hog;
      const starved =
        (first.got.inotify > 0 && other.got.inotify === 0) || (first.got.pty > 0 && other.got.pty === 0);
      const note = `first run got ${JSON.stringify(first.got)}, the other ${JSON.stringify(other.got)} (errno ${JSON.stringify(other.errno)})`;
      if (starved) return breach(note);
      return blockedIf(first.got.inotify === 0 && first.got.pty === 0, note);
    },
  );

  securityCase(
    {
      id: 'priv-new-syscalls',
      category: 'privilege',
      title: 'syscalls newer than the first filter (open_tree_attr, listmount, memfd_secret, kcmp, …)',
    },
    async (ctx) => {
      const r = await ctx.probe<{ results: Record<string, number> }>('new_syscalls');
      const allowed = Object.entries(r.results).filter(([, e]) => e !== 1 && e !== 38);
      const all = Object.entries(r.results)
        .map(([k, e]) => `${k}:${e}`)
        .join(' ');
      return blockedIf(allowed.length === 0, all);
    },
  );

  securityCase(
    {
      id: 'sec-proc-host-details',
      category: 'secrets',
      title: "/proc/cmdline, /proc/config.gz and the boot id show the host's",
    },
    async (ctx) => {
      const paths = ['/proc/cmdline', '/proc/config.gz', '/proc/sys/kernel/random/boot_id'];
      const r = await ctx.probe<{ files: Array<{ path: string; readable: boolean; sha256?: string }> }>(
        'read',
        {
          paths,
        },
      );
      const same: string[] = [];
      for (const f of r.files) {
        const host = await readFile(f.path).catch(() => undefined);
        if (f.readable && host !== undefined && host.length > 0 && f.sha256 === sha256(host))
          same.push(f.path);
      }
      return blockedIf(
        same.length === 0,
        same.length === 0 ? 'unreadable inside' : `readable: ${same.join(', ')}`,
      );
    },
  );
});
