/**
 * A local user who may write part of the workspace races the server's host-side work around a run: it swaps a
 * folder with a link to a folder it cannot reach, and a file with a link to a file it cannot read, in a loop
 * (RENAME_EXCHANGE), while the workspace is copied in and while a run's changes are applied back. Judged by the
 * canaries the test planted outside the workspace: nothing written, read or deleted there.
 *
 * Most trials call the real copy and apply functions on real folders (fast); a few go end to end through the
 * sandbox (and so end in SANDBOX_DENIED when the sandbox is forced off).
 */
import { lchown, lstat, mkdir, readdir, readFile, symlink, unlink, writeFile } from 'node:fs/promises';
import { closeSync, constants, openSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { describe } from 'vitest';
import { applyWorkspaceChanges } from '../../src/sandbox/apply-workspace-changes.js';
import { copyWorkspace } from '../../src/sandbox/copy-workspace.js';
import { isSkillsError } from '../../src/errors.js';
import { removeTree } from '../../src/sandbox/remove-tree.js';
import { canaryToken, treeHash } from './harness/host.js';
import { blocked, breach, securitySuite, type CaseContext } from './harness/security-case.js';
import { startSwapper, SWAPPER_ID } from './harness/swapper.js';

const { securityCase } = securitySuite();
const ROOT = process.getuid?.() === 0;
/** The identity a root server gives the sandbox (and so its copy); an ordinary server keeps its own. */
const SANDBOX_ID = ROOT ? { uid: 65534, gid: 65534 } : undefined;

const give = async (p: string) => {
  if (ROOT) await lchown(p, SWAPPER_ID.uid, SWAPPER_ID.gid);
};

interface Race {
  ws: string;
  token: string;
  /** Puts `del.txt` back in the real `sub/` folder (through an fd opened before the race: never through a link). */
  restore(): void;
  /** Throws unless the swapper has been swapping all along. */
  stillRacing(): void;
  /** Files in the canary folder written, rewritten or deleted since it was planted. */
  damage(): Promise<number>;
}

/** Name and content of every file below `dir`. */
async function listing(dir: string): Promise<Map<string, string>> {
  const m = new Map<string, string>();
  const walk = async (d: string, rel: string): Promise<void> => {
    for (const name of await readdir(d)) {
      const st = await lstat(join(d, name));
      if (st.isDirectory()) await walk(join(d, name), `${rel}${name}/`);
      else m.set(`${rel}${name}`, st.isFile() ? await readFile(join(d, name), 'utf8') : 'other');
    }
  };
  await walk(dir, '');
  return m;
}

/**
 * `<ws>/att/` belongs to the swapper and holds `sub/` (files to rewrite and delete) beside `lnk -> <canary>/dir`, and
 * `file.txt` beside `flink -> <canary>/secret`; the canary folder (0700) and its files (0600) are the test's. With
 * `ownWorkspace`, the workspace itself belongs to the swapper.
 */
async function raceWorkspace(ctx: CaseContext, ownWorkspace: boolean): Promise<Race> {
  const token = canaryToken();
  const base = await ctx.h.dirs.make('skills-mcp-sec-race-', 0o755);
  const canary = await ctx.h.dirs.make('skills-mcp-sec-race-canary-', 0o700);
  await mkdir(join(canary, 'dir'), { mode: 0o700 });
  for (const n of ['doc.txt', 'x.txt', 'del.txt'])
    await writeFile(join(canary, 'dir', n), token, { mode: 0o600 });
  await writeFile(join(canary, 'secret'), token, { mode: 0o600 });
  const ws = join(base, 'ws');
  await mkdir(ws, { mode: 0o755 });
  if (ownWorkspace) await give(ws);
  const att = join(ws, 'att');
  await mkdir(join(att, 'sub'), { recursive: true, mode: 0o755 });
  await writeFile(join(att, 'sub', 'doc.txt'), 'doc\n');
  await writeFile(join(att, 'sub', 'del.txt'), 'delete me\n');
  await writeFile(join(att, 'file.txt'), 'plain\n');
  await symlink(join(canary, 'dir'), join(att, 'lnk'));
  await symlink(join(canary, 'secret'), join(att, 'flink'));
  for (const p of [att, join(att, 'sub'), join(att, 'file.txt'), join(att, 'lnk'), join(att, 'flink')])
    await give(p);
  for (const n of await readdir(join(att, 'sub'))) await give(join(att, 'sub', n));
  const before = await treeHash(canary);
  const planted = await listing(canary);
  const damage = async () => {
    const now = await listing(canary);
    let n = [...planted.keys()].filter((k) => !now.has(k)).length;
    for (const [k, v] of now) if (planted.get(k) !== v) n++;
    return n;
  };
  ctx.untouched('canary folder outside the workspace', async () => (await treeHash(canary)) === before);
  const sub = openSync(join(att, 'sub'), constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW);
  ctx.defer(() => closeSync(sub));
  const restore = () => {
    const fd = openSync(
      `/proc/self/fd/${sub}/del.txt`,
      constants.O_WRONLY | constants.O_CREAT | constants.O_NOFOLLOW,
      0o644,
    );
    writeSync(fd, 'delete me\n');
    closeSync(fd);
  };
  const swapper = await startSwapper([
    [join(att, 'sub'), join(att, 'lnk')],
    [join(att, 'file.txt'), join(att, 'flink')],
  ]);
  ctx.defer(() => swapper.stop());
  const stillRacing = () => {
    if (!swapper.running()) throw new Error('the swapper stopped before the trials ended');
  };
  return { ws, token, restore, stillRacing, damage };
}

/** Any file of the copy holding the canary token (read through a link the copy followed). */
async function leaked(dir: string, token: string): Promise<number> {
  let n = 0;
  const walk = async (d: string): Promise<void> => {
    for (const name of await readdir(d)) {
      const st = await lstat(join(d, name));
      if (st.isDirectory()) await walk(join(d, name));
      else if (st.isFile() && (await readFile(join(d, name), 'utf8')).includes(token)) n++;
    }
  };
  await walk(dir);
  return n;
}

const isDir = (p: string) =>
  lstat(p).then(
    (s) => s.isDirectory(),
    () => false,
  );

/** What a run changes in its copy: a rewrite, a new file, a new file in a new folder and a deletion. */
async function change(copyDir: string, i: number): Promise<boolean> {
  for (const name of ['sub', 'lnk']) {
    const d = join(copyDir, 'att', name);
    if (!(await isDir(d))) continue;
    await writeFile(join(d, 'doc.txt'), `rewritten ${i}\n`);
    await writeFile(join(d, `new-${i}.txt`), `created ${i}\n`);
    await mkdir(join(d, `p-${i}`));
    await writeFile(join(d, `p-${i}`, 'x.txt'), `parent ${i}\n`);
    await unlink(join(d, 'del.txt')).catch(() => undefined);
    return true;
  }
  return false;
}

/**
 * Copies and applies of the workspace while the swapper runs, at least `want.trials` of them and on until
 * `want.copies` copies got through the race (at most `want.max` trials: how many the race refuses depends on how
 * the two processes are scheduled); counts what happened.
 */
async function trials(race: Race, want: { trials: number; copies: number; max: number }) {
  const t = { trials: 0, copies: 0, copyFailed: 0, leaks: 0, applied: 0, written: 0, deleted: 0, refused: 0 };
  for (let i = 0; i < want.max && (i < want.trials || t.copies < want.copies); i++) {
    t.trials++;
    race.restore();
    let copy;
    try {
      copy = await copyWorkspace(race.ws, SANDBOX_ID, SANDBOX_ID);
    } catch {
      t.copyFailed++;
      continue;
    }
    try {
      t.copies++;
      t.leaks += await leaked(copy.dir, race.token);
      if (!(await change(copy.dir, i))) continue;
      const r = await applyWorkspaceChanges(copy, ROOT);
      t.applied++;
      t.written += r.written.length;
      t.deleted += r.deleted.length;
      t.refused += r.refused.length;
    } finally {
      await copy.worker.done().catch(() => undefined);
      await removeTree(copy.dir);
    }
  }
  return t;
}

/** A few runs end to end, through the real sandbox, while the swapper runs; how many were refused safely. */
async function endToEnd(ctx: CaseContext, race: Race): Promise<number> {
  const ws = race.ws;
  let failed = 0;
  for (let i = 0; i < 3; i++) {
    race.restore();
    const run = ctx.probe(
      'workspace_write',
      {
        workspace: ws,
        files: Object.fromEntries(
          ['sub', 'lnk'].flatMap((d) => [
            [`att/${d}/e2e-${i}.txt`, 'e2e\n'],
            [`att/${d}/doc.txt`, 'e2e\n'],
            [`att/${d}/q-${i}/x.txt`, 'e2e\n'],
          ]),
        ),
        delete: ['sub', 'lnk'].map((d) => `att/${d}/del.txt`),
      },
      { plan: { workspace: { path: ws, write: true } } },
    );
    // A copy or apply the race made fail is a safe outcome; the canaries judge the rest.
    await run.catch((e: unknown) => {
      if (!isSkillsError(e) || e.code !== 'SANDBOX_FAILED') throw e;
      failed++;
    });
  }
  return failed;
}

describe('filesystem: copy-in and apply-back raced by a local user', () => {
  securityCase(
    {
      id: 'fs-workspace-swap-race',
      category: 'filesystem',
      title:
        'swap a workspace folder and file with links outside (RENAME_EXCHANGE loop) during copy-in and apply-back',
      timeoutMs: 900_000,
    },
    async (ctx) => {
      const race = await raceWorkspace(ctx, false);
      const e2e = await endToEnd(ctx, race);
      const t = await trials(race, { trials: 200, copies: 100, max: 600 });
      race.stillRacing();
      const note = `3 sandboxed runs (${e2e} refused), ${t.trials} trials: ${t.copies} copies (${t.copyFailed} refused), ${t.applied} applies: ${t.written} written, ${t.deleted} deleted, ${t.refused} refused`;
      const damaged = await race.damage();
      if (t.leaks + damaged > 0)
        return breach(
          `${damaged} canary files written or deleted, ${t.leaks} copied files held the canary; ${note}`,
        );
      // Not vacuous: the race left room for work to be done.
      if (t.copies < 100 || t.written === 0) throw new Error(`too little was applied to judge: ${note}`);
      return blocked(`canaries untouched and never read; ${note}`);
    },
  );

  securityCase(
    {
      id: 'fs-workspace-swap-race-owner',
      category: 'filesystem',
      title: 'the same race in a workspace that belongs to the swapping user',
      timeoutMs: 600_000,
    },
    async (ctx) => {
      const race = await raceWorkspace(ctx, true);
      const e2e = await endToEnd(ctx, race);
      const t = await trials(race, { trials: 60, copies: 30, max: 400 });
      race.stillRacing();
      const note = `3 sandboxed runs (${e2e} refused), ${t.trials} trials: ${t.copies} copies (${t.copyFailed} refused), ${t.applied} applies: ${t.written} written, ${t.deleted} deleted, ${t.refused} refused`;
      const damaged = await race.damage();
      if (t.leaks + damaged > 0)
        return breach(
          `${damaged} canary files written or deleted, ${t.leaks} copied files held the canary; ${note}`,
        );
      if (t.copies < 30 || t.written === 0) throw new Error(`too little was applied to judge: ${note}`);
      return blocked(`canaries untouched and never read; ${note}`);
    },
  );
});
