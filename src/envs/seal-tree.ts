import { chmodSync, lchownSync, lstatSync, readdirSync, readlinkSync } from 'node:fs';
import { join, relative } from 'node:path';
import { SkillsError } from '../errors.js';

/** Links followed while resolving one target, as the kernel allows (ELOOP past it). */
const MAX_HOPS = 40;

/**
 * Where the link at `parts` (path components below `root`) leads, resolved lexically inside the tree: `..` and
 * every link met on the way are applied to the components, never asked of the host. Undefined when the target is
 * absolute, climbs above `root` or takes more than {@link MAX_HOPS} links. Only paths inside `root` whose
 * components are all real folders are ever looked at (lstat, readlink), so nothing outside is touched.
 */
export function resolveInside(root: string, parts: readonly string[], hops = { n: 0 }): string[] | undefined {
  if (++hops.n > MAX_HOPS) return undefined;
  const target = readlinkSync(join(root, ...parts));
  if (target.startsWith('/')) return undefined;
  const at = parts.slice(0, -1);
  const segs = target.split('/').filter((s) => s !== '' && s !== '.');
  for (const [i, s] of segs.entries()) {
    if (s === '..') {
      if (at.length === 0) return undefined;
      at.pop();
      continue;
    }
    at.push(s);
    // The last component may be a link itself: it is an entry of the tree, checked on its own.
    if (i === segs.length - 1) break;
    if (lstatSync(join(root, ...at), { throwIfNoEntry: false })?.isSymbolicLink() === true) {
      const next = resolveInside(root, at, hops);
      if (next === undefined) return undefined;
      at.splice(0, at.length, ...next);
    }
  }
  return at;
}

const shown = (s: string) => JSON.stringify(s.length > 200 ? `${s.slice(0, 200)}…` : s);

/**
 * Makes a finished build immutable before it is renamed into place: every folder 0555, every file 0444 (0555 when
 * executable), owned by the server when it is root (so the sandbox user, who ran the installer, cannot change it
 * back). Links are never followed: the tree was written by an installer and is hostile. A link whose target leaves
 * the tree (absolute, or above it once resolved lexically) is refused, so a built environment holds nothing that
 * points outside it. Returns the file count.
 */
export function sealTree(root: string, owner?: { uid: number; gid: number }): number {
  let files = 0;
  const walk = (p: string, parts: string[]) => {
    const st = lstatSync(p);
    if (st.isSymbolicLink()) {
      if (resolveInside(root, parts) === undefined)
        throw new SkillsError(
          'ENV_INSTALL_FAILED',
          `the installer left a link that leaves the environment: ${shown(relative(root, p))} -> ${shown(readlinkSync(p))}`,
          {
            hint: 'Nothing of it was kept. Vendor the package inside the skill folder (`file:vendor/<name>`) or install it from the operator’s registry, so that the environment holds it.',
          },
        );
      if (owner !== undefined) lchownSync(p, owner.uid, owner.gid);
      return;
    }
    if (owner !== undefined) lchownSync(p, owner.uid, owner.gid);
    if (st.isDirectory()) {
      for (const e of readdirSync(p)) walk(join(p, e), [...parts, e]);
      chmodSync(p, 0o555);
      return;
    }
    files++;
    chmodSync(p, st.isFile() && (st.mode & 0o111) !== 0 ? 0o555 : 0o444);
  };
  walk(root, []);
  return files;
}
