import { statSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import type { Bind } from './bwrap-args.js';

/**
 * Root servers run bwrap as uid 65534, and bwrap resolves every mount source with the caller's
 * permissions. A source below a folder 65534 cannot traverse (pyenv in `/root`, mode 700) would fail.
 * Such sources are "staged": a first bwrap, run as root, creates a private mount namespace in which each
 * one is bind-mounted below a fresh, world-traversable tmpfs (`stageDir`); it then drops to 65534 with
 * `setpriv` and starts the real sandbox, which binds the staged path at the original destination. The
 * sandboxed process is the same as without staging; nothing changes on the host except the empty
 * `stageDir` folder the server created. Staging happens only for sources that need it.
 */

/** Do the mode bits of `st` give `uid`/`gid` (no supplementary groups, no capabilities) permission `bit` (4, 2, 1)? */
export const perm = (
  mode: number,
  uid: number,
  gid: number,
  st: { uid: number; gid: number },
  bit: number,
) =>
  st.uid === uid
    ? (mode & (bit << 6)) !== 0
    : st.gid === gid
      ? (mode & (bit << 3)) !== 0
      : (mode & bit) !== 0;

/** Can `uid`/`gid` (no supplementary groups, no capabilities) reach and read `p`? Mode bits only. */
export function isReachableBy(p: string, uid: number, gid: number): boolean {
  try {
    const chain: string[] = [];
    for (let d = dirname(p); ; d = dirname(d)) {
      chain.push(d);
      if (d === '/') break;
    }
    for (const d of chain) {
      const st = statSync(d);
      if (!perm(st.mode, uid, gid, st, 0o1)) return false;
    }
    const st = statSync(p);
    return perm(st.mode, uid, gid, st, 0o4) && (!st.isDirectory() || perm(st.mode, uid, gid, st, 0o1));
  } catch {
    return false;
  }
}

/** May `uid`/`gid` list and enter the folder `p` itself (its parents aside)? Mode bits only. */
export function isFolderOpenTo(p: string, uid: number, gid: number): boolean {
  try {
    const st = statSync(p);
    return st.isDirectory() && perm(st.mode, uid, gid, st, 0o4) && perm(st.mode, uid, gid, st, 0o1);
  } catch {
    return false;
  }
}

export interface StagedBinds {
  /** Binds for the real sandbox (sources rewritten to staged paths where needed). */
  inner: Bind[];
  /** Binds the root stager makes: host source → `stageDir/<n>`. Empty when nothing needs staging. */
  outer: Bind[];
}

export function stageBinds(
  binds: readonly Bind[],
  needsStage: ReadonlySet<string>,
  stageDir: string,
): StagedBinds {
  const outer: Bind[] = [];
  const inner = binds.map((b) => {
    if (!needsStage.has(b.src)) return b;
    const staged = join(stageDir, String(outer.length));
    outer.push({ src: b.src, dest: staged, write: b.write });
    return { ...b, src: staged };
  });
  return { inner, outer };
}

/**
 * What a root launcher prepared ahead of its call (`launcher-pool.ts`): a stager namespace with these folders already
 * mounted below `dir`, so a call whose sources they cover skips the stager bwrap (several ms). `dev`/`ino` tell
 * whether a folder was replaced since.
 */
export interface PreStage {
  dir: string;
  roots: { src: string; dest: string; write: boolean; dev: number; ino: number }[];
}

/**
 * The folder to pre-stage for an unreachable source: its parent when `uid`/`gid` may pass through the parent (one
 * staged folder then serves every call's output folder, every skill of a root, every interpreter of a version
 * manager), else the source itself.
 */
export function stageRootOf(src: string, uid: number, gid: number): string {
  const parent = dirname(src);
  if (parent === '/') return src;
  try {
    const st = statSync(parent);
    return perm(st.mode, uid, gid, st, 0o1) ? parent : src;
  } catch {
    return src;
  }
}

/** A pre-stage of `roots` (folder → writable) below `dir`, in a stable order. Throws when a folder is missing. */
export function preStage(dir: string, roots: ReadonlyMap<string, boolean>): PreStage {
  return {
    dir,
    roots: [...roots.keys()].sort().map((src, i) => {
      const st = statSync(src);
      return { src, dest: join(dir, `r${i}`), write: roots.get(src) === true, dev: st.dev, ino: st.ino };
    }),
  };
}

/**
 * The binds rewritten onto a pre-stage: each source in `unreachable` moves to its staged folder (or below it).
 * Undefined when one is not covered (or needs writing where the folder is staged read-only), or when a staged folder
 * was replaced since it was mounted.
 */
export function onPreStage(
  binds: readonly Bind[],
  unreachable: ReadonlySet<string>,
  ps: PreStage,
  uid: number,
  gid: number,
): Bind[] | undefined {
  const passable = new Set<string>();
  for (const r of ps.roots) {
    const st = statSync(r.src, { throwIfNoEntry: false });
    if (st?.dev !== r.dev || st.ino !== r.ino) return undefined;
    if (perm(st.mode, uid, gid, st, 0o1)) passable.add(r.src);
  }
  const inner: Bind[] = [];
  for (const b of binds) {
    if (!unreachable.has(b.src)) {
      inner.push(b);
      continue;
    }
    // The staged folder itself, or a folder right in it that `uid` may pass through (as `stageRootOf` chose).
    const r = ps.roots.find((x) => b.src === x.src || (dirname(b.src) === x.src && passable.has(x.src)));
    if (r === undefined || (b.write && !r.write)) return undefined;
    inner.push({ ...b, src: b.src === r.src ? r.dest : join(r.dest, basename(b.src)) });
  }
  return inner;
}

/** Options of the root stager bwrap (no user namespace: it runs as root to read the sources). */
export function stagerArgs(stageDir: string, outer: readonly Bind[]): string[] {
  const a = ['--dev-bind', '/', '/', '--size', '65536', '--tmpfs', stageDir];
  for (const b of outer) a.push(b.write ? '--bind' : '--ro-bind', b.src, b.dest);
  a.push('--die-with-parent');
  return a;
}
