import { realpathSync, statSync, watch, type FSWatcher } from 'node:fs';
import { basename, resolve, sep } from 'node:path';
import { performance } from 'node:perf_hooks';
import type { Logger } from '../log.js';
import { hasSameCandidates, type Catalog } from './catalog.js';
import { discoverSkills, isListingUnchanged } from './discover-skills.js';
import { isUnchanged, type FolderLoad } from './folder-load.js';

export interface FolderWatchOptions {
  /** The catalog to follow: every folder it was loaded from is watched. */
  current: () => Catalog;
  /** Something changed in a watched folder, or a check found the catalog out of date: reload soon. */
  changed: () => void;
  log: Logger;
  /** How long one batch of the set-up may hold the event loop before it yields (default 2 ms). */
  sliceMs?: number;
  /**
   * Called at the end of each pass with the catalog it followed, and whether the pass checked every load of it in
   * full (all its stamps, once its watches were in place) and found none changed.
   */
  passed?: (catalog: Catalog, checkedAll: boolean) => void;
}

export interface FolderWatches {
  /**
   * Brings the watches in line with the current catalog: folders it no longer has are let go at once; new ones are
   * watched in batches that yield to the event loop, and each load whose watches were opened is then checked
   * against its stamps (a change made before its watch was in place calls `changed`). Cheap when nothing changed.
   */
  sync(): void;
  close(): void;
}

/**
 * One non-recursive watch per folder a catalog depends on: each root (skills added, removed, renamed), its nested
 * `skills/` folder, and every folder of every skill. On Linux a folder's watch also reports writes to the files in
 * it, so this sees what a recursive watch sees, without Node's recursive watch, which walks the whole tree at once
 * and opens a watch per file too. Watch errors (the inotify limit, no permission) are logged once per kind and
 * never thrown: what is not watched is not seen, and everything else goes on.
 */
export function watchFolders(opts: FolderWatchOptions): FolderWatches {
  const { log, changed } = opts;
  const sliceMs = opts.sliceMs ?? 2;
  const watches = new Map<string, FSWatcher>();
  const warned = new Set<string>();
  /** The catalog the watches follow. */
  let synced: Catalog | undefined;
  /** A watch was let go while its path is still wanted: the next sync walks the catalog again. */
  let dirty = false;
  // The pass under way: the roots' folders to watch first, then the loads from `next` on.
  let roots: string[] | undefined;
  let queue: readonly FolderLoad[] = [];
  let next = 0;
  /** Paths whose watch this pass opened before reaching the loads (a root that is itself a skill folder). */
  const fresh = new Set<string>();
  /** A check failed: reload once the pass is done. */
  let stale = false;
  /** Every load of this pass was checked in full. */
  let checkedAll = true;
  /** The watch limit was reached: this pass opens no more. */
  let blocked = false;
  let pending: NodeJS.Immediate | undefined;
  let closed = false;
  let reported = false;

  const warn = (err: unknown, path: string) => {
    const code = (err as NodeJS.ErrnoException).code ?? 'unknown';
    if (warned.has(code)) return;
    warned.add(code);
    if (code === 'ENOSPC') {
      log.warn(
        { err, path, watched: watches.size },
        'the inotify watch limit is reached: hot reload does not see changes in the skill folders left unwatched ' +
          '(raise it, e.g. `sysctl fs.inotify.max_user_watches=524288`, or serve with --no-watch)',
      );
    } else log.warn({ err, path }, 'cannot watch a skill folder: hot reload does not see changes in it');
  };

  /** Lets go of the watch of `path` and of every folder under it: they may follow folders moved elsewhere. */
  const drop = (path: string) => {
    const under = `${path}${sep}`;
    for (const [p, w] of watches) {
      if (p !== path && !p.startsWith(under)) continue;
      w.close();
      watches.delete(p);
    }
    dirty = true;
  };

  /** Watches `path` unless it is; true when this call opened its watch. */
  const open = (path: string): boolean => {
    if (watches.has(path) || blocked) return false;
    let w: FSWatcher;
    try {
      w = watch(path, { persistent: false }, (event, name) => {
        // The folder itself was removed or moved (its own name, as the kernel reports it): the watch now follows
        // nothing, or a folder elsewhere.
        if (event === 'rename' && name === basename(path)) drop(path);
        changed();
      });
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      // Gone since it was loaded: the catalog is out of date.
      if (code === 'ENOENT' || code === 'ENOTDIR') stale = true;
      else {
        if (code === 'ENOSPC') blocked = true;
        warn(err, path);
      }
      return false;
    }
    // Without a listener an error event would be thrown. The folder is watched again at the next sync.
    w.on('error', (err) => {
      warn(err, path);
      if (watches.get(path) === w) drop(path);
    });
    watches.set(path, w);
    return true;
  };

  /** Watches the load's folders; true when any of them was not watched before this pass. */
  const watchLoad = (load: FolderLoad): boolean => {
    const base = load.dir;
    let opened = fresh.has(base);
    const folders = load.stamps?.folders;
    if (folders !== undefined) {
      for (const f of folders) if (open(f.path === '' ? base : `${base}${sep}${f.path}`)) opened = true;
      return opened;
    }
    for (const p of load.walked ?? TOP) if (open(p === '' ? base : `${base}${sep}${p}`)) opened = true;
    return opened;
  };

  const step = () => {
    pending = undefined;
    const catalog = synced;
    if (closed || catalog === undefined) return;
    const until = performance.now() + sliceMs;
    if (roots !== undefined) {
      for (const r of roots) if (open(r)) fresh.add(r);
      roots = undefined;
    }
    while (next < queue.length) {
      const load = queue[next++]!;
      // A change made between the load and its watches shows in its stamps; a load kept without stamps (changed
      // moments before it was read, or holding a symlink) is read again.
      if (!watchLoad(load)) checkedAll = false;
      else if (!stale && !isUnchanged(load)) stale = true;
      if ((next & 7) === 0 && performance.now() >= until) break;
    }
    if (next < queue.length) {
      pending = setImmediate(step);
      return;
    }
    // Skill folders added, removed or renamed before the roots were watched: the roots' stamps show it, else a
    // discovery made now (last: listing a large root is the longest single step, and the first answers are out).
    if (fresh.size > 0 && !stale && !isListedAsBefore(catalog)) stale = true;
    fresh.clear();
    if (!reported) {
      reported = true;
      log.debug({ folders: watches.size }, 'watching the skill folders');
    }
    const all = checkedAll && !stale;
    checkedAll = true;
    opts.passed?.(catalog, all);
    if (stale) {
      stale = false;
      changed();
    }
  };

  /** Closes the watches of folders the catalog no longer has. */
  const letGo = (catalog: Catalog, rootFolders: readonly string[]) => {
    const wanted = new Set<string>(rootFolders);
    for (const load of catalog.folders) {
      const base = load.dir;
      const folders = load.stamps?.folders;
      if (folders !== undefined)
        for (const f of folders) wanted.add(f.path === '' ? base : `${base}${sep}${f.path}`);
      else for (const p of load.walked ?? TOP) wanted.add(p === '' ? base : `${base}${sep}${p}`);
    }
    for (const [p, w] of watches) {
      if (wanted.has(p)) continue;
      w.close();
      watches.delete(p);
    }
  };

  return {
    sync() {
      if (closed) return;
      const catalog = opts.current();
      if (catalog === synced && !dirty) return;
      const rootFolders = foldersOfRoots(catalog.roots);
      if (synced !== undefined) letGo(catalog, rootFolders);
      synced = catalog;
      dirty = false;
      roots = rootFolders;
      queue = catalog.folders;
      next = 0;
      blocked = false;
      checkedAll = true;
      fresh.clear();
      pending ??= setImmediate(step);
    },
    close() {
      closed = true;
      if (pending !== undefined) clearImmediate(pending);
      pending = undefined;
      for (const w of watches.values()) w.close();
      watches.clear();
    },
  };
}

const TOP: readonly string[] = [''];

const isListedAsBefore = (catalog: Catalog): boolean =>
  catalog.listing !== undefined
    ? isListingUnchanged(catalog.roots, catalog.listing)
    : hasSameCandidates(catalog, discoverSkills(catalog.roots));

/** Each root's real path and, when it has one, its nested `skills/` folder (discovery looks in both). */
function foldersOfRoots(roots: readonly string[]): string[] {
  const folders: string[] = [];
  for (const r of roots) {
    let real: string;
    try {
      real = realpathSync(resolve(r));
    } catch {
      continue; // a missing root is reported by the load
    }
    folders.push(real);
    const nested = `${real}${sep}skills`;
    try {
      if (statSync(nested, { throwIfNoEntry: false })?.isDirectory() === true) folders.push(nested);
    } catch {
      // not a folder discovery could read either
    }
  }
  return folders;
}
