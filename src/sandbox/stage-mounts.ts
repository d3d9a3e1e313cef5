import { statSync } from 'node:fs';
import { dirname, join } from 'node:path';
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

const perm = (mode: number, uid: number, gid: number, st: { uid: number; gid: number }, bit: number) =>
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

/** Options of the root stager bwrap (no user namespace: it runs as root to read the sources). */
export function stagerArgs(stageDir: string, outer: readonly Bind[]): string[] {
  const a = ['--dev-bind', '/', '/', '--size', '65536', '--tmpfs', stageDir];
  for (const b of outer) a.push(b.write ? '--bind' : '--ro-bind', b.src, b.dest);
  a.push('--die-with-parent');
  return a;
}
