import { lstat, readdir, readFile, stat, writeFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { basename, join } from 'node:path';
import { describe } from 'vitest';
import { groupFile, passwdFile } from '../../src/sandbox/bwrap-args.js';
import { collectOutput, type OutputFolders } from '../../src/runner/collect-output.js';
import { folderIdOf } from '../../src/sandbox/output-folder.js';
import { canaryToken, exists, sha256, treeHash } from './harness/host.js';
import {
  bestEffort,
  blocked,
  blockedIf,
  breach,
  contained,
  securitySuite,
  type CaseContext,
} from './harness/security-case.js';

const { securityCase, securityControl } = securitySuite();
const MiB = 1024 * 1024;

interface FileReport {
  path: string;
  readable: boolean;
  tokens?: string[];
  sha256?: string;
}
const readProbe = (ctx: CaseContext, paths: string[], o = {}) =>
  ctx.probe<{ files: FileReport[] }>('read', { paths }, o).then((r) => r.files);

/** A world-readable secret outside every mount, so only the mount allow-list can keep it out. */
async function plantSecret(ctx: CaseContext): Promise<{ dir: string; file: string; token: string }> {
  const dir = await ctx.h.dirs.make('skills-mcp-sec-secret-');
  const token = canaryToken();
  const file = join(dir, 'id_canary');
  await writeFile(file, `-----BEGIN KEY-----\n${token}\n`, { mode: 0o644 });
  return { dir, file, token };
}

const noneReadable = (files: FileReport[]) => files.every((f) => !f.readable);

/** The folders of a call as the server records them before the spawn. */
function foldersOf(outDir: string): OutputFolders {
  const filesDir = join(outDir, 'files');
  return { outDir, filesDir, out: folderIdOf(outDir), files: folderIdOf(filesDir) };
}

describe('filesystem', () => {
  securityControl(
    {
      id: 'fs-control',
      category: 'filesystem',
      title: 'reads its skill folder and writes its output folder',
    },
    async (ctx) => {
      const out = await ctx.out();
      const files = await readProbe(ctx, [ctx.h.probePath], { plan: { writablePaths: [out] } });
      const w = await ctx.probe<{ errno: number }>(
        'touch',
        { path: join(out, 'ok') },
        { plan: { writablePaths: [out] } },
      );
      return files[0]?.readable === true && w.errno === 0 && (await exists(join(out, 'ok')));
    },
  );

  securityCase(
    { id: 'fs-read-secret', category: 'filesystem', title: 'read a planted secret outside the mounts' },
    async (ctx) => {
      const s = await plantSecret(ctx);
      const files = await readProbe(ctx, [s.file, s.dir]);
      const leaked = files.some((f) => f.tokens?.includes(sha256(s.token)));
      return blockedIf(noneReadable(files) && !leaked, 'path does not exist inside (allow-list mounts)');
    },
  );

  securityCase(
    { id: 'fs-read-home', category: 'filesystem', title: "read the server user's home (~/.ssh, history)" },
    async (ctx) => {
      const home = homedir();
      const paths = [
        '.ssh/id_rsa',
        '.ssh/id_ed25519',
        '.ssh/authorized_keys',
        '.bash_history',
        '.npmrc',
        '.gitconfig',
      ];
      const files = await readProbe(
        ctx,
        paths.map((p) => join(home, p)),
      );
      const dirs = await ctx.probe<{ dirs: Record<string, { entries?: string[] }> }>('list', {
        paths: [home, join(home, '.ssh')],
      });
      // Inside, the home may exist only as the skeleton of a mount below it (e.g. a staged ~/.pyenv prefix).
      const interp = await ctx.h.sandbox.interpreters.resolve('python3');
      const skeleton = new Set(
        interp.mounts
          .filter((m) => m.startsWith(`${home}/`))
          .map((m) => m.slice(home.length + 1).split('/')[0]),
      );
      const extra = Object.values(dirs.dirs)
        .flatMap((d) => d.entries ?? [])
        .filter((e) => !skeleton.has(e));
      return blockedIf(
        noneReadable(files) && extra.length === 0,
        `${home} is not mounted (only mount-point skeletons appear)`,
      );
    },
  );

  securityCase(
    { id: 'fs-etc-shadow', category: 'filesystem', title: 'read /etc/shadow, /etc/gshadow, /etc/sudoers' },
    async (ctx) => {
      const files = await readProbe(ctx, ['/etc/shadow', '/etc/gshadow', '/etc/sudoers']);
      return blockedIf(noneReadable(files), 'not present inside');
    },
  );

  securityCase(
    {
      id: 'fs-etc-passwd',
      category: 'filesystem',
      title: '/etc/passwd and /etc/group are synthesized, not the host files',
    },
    async (ctx) => {
      const [p, g] = await readProbe(ctx, ['/etc/passwd', '/etc/group']);
      const uid = ctx.h.probeResult.sandboxUid ?? 0;
      const gid = uid === 65534 ? 65534 : (process.getgid?.() ?? 0);
      const synthetic = p?.sha256 === sha256(passwdFile(uid, gid)) && g?.sha256 === sha256(groupFile(gid));
      const host = p?.sha256 === sha256(await readFile('/etc/passwd'));
      return blockedIf(synthetic && !host, 'one synthesized user; host accounts invisible');
    },
  );

  securityCase(
    { id: 'fs-traversal-skill', category: 'filesystem', title: '../ traversal from the skill folder' },
    async (ctx) => {
      const s = await plantSecret(ctx);
      const files = await readProbe(ctx, [
        join(ctx.h.skill, '..', basename(s.dir), 'id_canary'),
        `${ctx.h.skill}/../../${s.file}`,
      ]);
      return blockedIf(noneReadable(files), 'siblings of a mount are not mounted');
    },
  );

  securityCase(
    { id: 'fs-traversal-output', category: 'filesystem', title: '../ traversal from the output folder' },
    async (ctx) => {
      const s = await plantSecret(ctx);
      const out = await ctx.out();
      const files = await readProbe(
        ctx,
        [`${out}/../${basename(s.dir)}/id_canary`, `${out}/../../../${s.file}`],
        {
          plan: { writablePaths: [out], cwd: out },
        },
      );
      return blockedIf(noneReadable(files), 'siblings of a mount are not mounted');
    },
  );

  securityCase(
    {
      id: 'fs-write-host-dir',
      category: 'filesystem',
      title: 'write into a world-writable host folder outside the mounts',
    },
    async (ctx) => {
      const target = join(ctx.h.canaryDir, 'written-by-sandbox');
      ctx.untouched('host folder unchanged', async () => !(await exists(target)));
      await ctx.probe('write', { paths: [target] });
      return blocked('folder not mounted; the write lands nowhere on the host');
    },
  );

  securityCase(
    { id: 'fs-write-system', category: 'filesystem', title: 'write to /usr, /usr/bin, /etc and /' },
    async (ctx) => {
      const name = `skills-mcp-canary-${Date.now()}`;
      const targets = [`/usr/${name}`, `/usr/bin/${name}`, `/etc/${name}`, `/${name}`];
      for (const t of targets) ctx.untouched(`${t} absent on host`, async () => !(await exists(t)));
      const r = await ctx.probe<{ writes: Record<string, number> }>('write', { paths: targets });
      return blockedIf(
        Object.values(r.writes).every((e) => e !== 0),
        'read-only mounts (EROFS)',
      );
    },
  );

  securityCase(
    {
      id: 'fs-modify-skill',
      category: 'filesystem',
      title: 'edit, chmod, delete or add files in its own skill folder',
    },
    async (ctx) => {
      const before = await treeHash(ctx.h.skill);
      ctx.untouched('skill folder hash unchanged', async () => (await treeHash(ctx.h.skill)) === before);
      await ctx.probe('modify_tree', { root: ctx.h.skill });
      return blocked('skill folder is mounted read-only');
    },
  );

  securityCase(
    {
      id: 'fs-symlink-inside',
      category: 'filesystem',
      title: 'symlink in the output folder to a host secret, read inside',
    },
    async (ctx) => {
      const s = await plantSecret(ctx);
      const out = await ctx.out();
      const r = await ctx.probe<{ read: FileReport }>(
        'symlink_read',
        { out, target: s.file },
        { plan: { writablePaths: [out] } },
      );
      return blockedIf(!r.read.readable, 'the link target does not exist inside');
    },
  );

  securityCase(
    {
      id: 'fs-symlink-collect',
      category: 'filesystem',
      title: 'symlink left for the server to collect (output.json -> secret)',
    },
    async (ctx) => {
      const s = await plantSecret(ctx);
      const out = await ctx.out();
      const folders = foldersOf(out);
      await ctx.probe('leave_links', { out, target: s.file }, { plan: { writablePaths: [out] } });
      const got = await collectOutput(folders, '');
      const leaked = JSON.stringify(got.json ?? null).includes(s.token);
      return blockedIf(
        !leaked && got.json === undefined && got.artifacts.length === 0,
        'the collector refuses links (O_PATH|O_NOFOLLOW per component)',
      );
    },
  );

  securityCase(
    { id: 'fs-hardlink-collect', category: 'filesystem', title: 'hard link left for the server to collect' },
    async (ctx) => {
      const out = await ctx.out();
      const folders = foldersOf(out);
      await writeFile(join(out, 'own'), 'x');
      const r = await ctx.probe<{ results: Record<string, number> }>(
        'leave_links',
        {
          out,
          target: '/nonexistent',
          hardlink_candidates: [ctx.h.probePath, '/usr/bin/python3', '/etc/passwd', join(out, 'own')],
        },
        { plan: { writablePaths: [out] } },
      );
      const made = Object.entries(r.results).filter(([k, e]) => k.startsWith('hardlink') && e === 0).length;
      const got = await collectOutput(folders, '');
      return blockedIf(
        got.artifacts.length === 0,
        `${made} link(s) possible, only within the output folder; the collector refuses files with nlink > 1`,
      );
    },
  );

  securityCase(
    { id: 'fs-mknod', category: 'filesystem', title: 'create device nodes (mknod) in the output folder' },
    async (ctx) => {
      const out = await ctx.out();
      ctx.untouched('no device node on the host', async () => {
        for (const n of await readdir(out)) if ((await lstat(join(out, n))).isCharacterDevice()) return false;
        return true;
      });
      const r = await ctx.probe<{ results: Record<string, number> }>(
        'mknod',
        { out },
        { plan: { writablePaths: [out] } },
      );
      return blockedIf(
        Object.values(r.results).every((e) => e !== 0),
        'EPERM: no CAP_MKNOD',
      );
    },
  );

  securityCase(
    { id: 'fs-kernel-memory', category: 'filesystem', title: 'read /dev/mem, /dev/port, /proc/kcore' },
    async (ctx) => {
      const r = await ctx.probe<{ results: Record<string, { bytes?: number }> }>('kernel_memory');
      return blockedIf(
        Object.values(r.results).every((x) => x.bytes === undefined),
        'devices absent, kcore needs CAP_SYS_RAWIO',
      );
    },
  );

  for (const [id, path] of [
    ['fs-fill-tmp', '/tmp/fill'],
    ['fs-fill-devshm', '/dev/shm/fill'],
  ] as const) {
    securityCase(
      { id, category: 'filesystem', title: `fill ${path.replace('/fill', '')} beyond tmpfsMiB` },
      async (ctx) => {
        ctx.untouched('nothing written to the host path', async () => !(await exists(`${path}.0`)));
        const r = await ctx.probe<{ written: number; errno: number }>(
          'fill',
          { path, cap_bytes: 64 * MiB },
          { plan: { limits: { tmpfsMiB: 16 } } },
        );
        return r.written <= 16 * MiB && r.errno === 28
          ? contained(`ENOSPC after ${r.written / MiB} MiB in a private 16 MiB tmpfs`)
          : breach(`wrote ${r.written / MiB} MiB`);
      },
    );
  }

  securityCase(
    {
      id: 'fs-file-size',
      category: 'filesystem',
      title: 'write one file beyond fileSizeMiB in the output folder',
    },
    async (ctx) => {
      const out = await ctx.out();
      await ctx.probe(
        'fill',
        { path: join(out, 'big'), cap_bytes: 32 * MiB },
        { plan: { writablePaths: [out], limits: { fileSizeMiB: 4 } } },
      );
      const size = (await stat(join(out, 'big.0'))).size;
      return blockedIf(size <= 4 * MiB, `file stopped at ${size / MiB} MiB (RLIMIT_FSIZE)`);
    },
  );

  securityCase(
    {
      id: 'fs-output-total',
      category: 'filesystem',
      title: 'many files under fileSizeMiB in the output folder',
    },
    async (ctx) => {
      const out = await ctx.out();
      await ctx.probe(
        'fill',
        { path: join(out, 'part'), cap_bytes: 12 * MiB, files: 4, per_file_cap: 3 * MiB },
        { plan: { writablePaths: [out], limits: { fileSizeMiB: 4 } } },
      );
      let total = 0;
      for (const n of await readdir(out)) total += (await stat(join(out, n))).size;
      return total > 4 * MiB
        ? bestEffort(
            `${(total / MiB).toFixed(1)} MiB written: each file is capped (RLIMIT_FSIZE), the output folder has no total quota`,
          )
        : blocked('total stayed under one file size');
    },
  );

  securityCase(
    { id: 'fs-mount-games', category: 'filesystem', title: 'mount over, unmount or rename its mounts' },
    async (ctx) => {
      const out = await ctx.out();
      const before = await treeHash(ctx.h.skill);
      ctx.untouched(
        'skill folder and output folder unchanged',
        async () => (await treeHash(ctx.h.skill)) === before && (await exists(out)),
      );
      const r = await ctx.probe<{ results: Record<string, number> }>(
        'mount_games',
        { out, skill: ctx.h.skill },
        { plan: { writablePaths: [out] } },
      );
      return blockedIf(
        Object.values(r.results).every((e) => e !== 0),
        'EPERM (seccomp, no capabilities) / EBUSY on mount points',
      );
    },
  );
});
