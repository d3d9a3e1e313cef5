import { watch, type FSWatcher } from 'node:fs';
import type { Catalog } from './catalog.js';
import { reloadCatalog, type ReloadOptions } from './reload-catalog.js';
import { watchFolders, type FolderWatches } from './watch-folders.js';

export type { CatalogDiff } from './diff-catalogs.js';

export interface CatalogWatcher {
  /**
   * Starts watching. Call it once the transport serves: on Linux the watches are set up in batches after that,
   * off the first answers' path, and the catalog is checked against its stamps once they are in place.
   */
  start(): void;
  /** Follows the current catalog after it changed by other means (a reload of a changed skill file). */
  sync(): void;
  close(): void;
}

export interface WatchOptions extends ReloadOptions {
  roots: readonly string[];
  debounceMs?: number;
  /**
   * One watch per folder the catalog depends on (default on every platform but macOS and Windows), instead of one
   * recursive watch per root (native and cheap there; on Linux, Node walks the whole tree and watches every file).
   */
  perFolder?: boolean;
  /** How long one batch of the per-folder set-up may hold the event loop (ms). */
  sliceMs?: number;
  /**
   * Per folder: called when a pass of the set-up ends, with the catalog it followed and whether it checked every
   * load of it in full (all stamps, each after its watches were in place) and found none changed.
   */
  passed?: (catalog: Catalog, checkedAll: boolean) => void;
}

/**
 * Watches the skills and reloads the catalog after changes settle. A broken edit only drops or keeps back the
 * broken skill: the reload itself never throws, and a failed reload keeps the current catalog.
 */
export function watchCatalog(opts: WatchOptions): CatalogWatcher {
  const { log, debounceMs = 150 } = opts;
  let timer: NodeJS.Timeout | undefined;
  let folders: FolderWatches | undefined;
  const reload = () => {
    timer = undefined;
    reloadCatalog(opts);
    // Also when nothing was served differently: a watch let go of is opened again.
    folders?.sync();
  };
  const schedule = () => {
    if (timer !== undefined) clearTimeout(timer);
    timer = setTimeout(reload, debounceMs);
  };
  const perFolder = opts.perFolder ?? (process.platform !== 'darwin' && process.platform !== 'win32');
  const recursive: FSWatcher[] = [];
  return {
    start() {
      if (perFolder) {
        folders ??= watchFolders({
          current: opts.current,
          changed: schedule,
          log,
          ...(opts.sliceMs === undefined ? {} : { sliceMs: opts.sliceMs }),
          ...(opts.passed === undefined ? {} : { passed: opts.passed }),
        });
        folders.sync();
        return;
      }
      for (const root of opts.roots) {
        try {
          const w = watch(root, { recursive: true, persistent: false }, schedule);
          w.on('error', (err) =>
            log.warn({ err, root }, 'watching a skills root failed; hot reload is off for it'),
          );
          recursive.push(w);
        } catch (err) {
          log.warn({ err, root }, 'cannot watch skills root; hot reload is off for it');
        }
      }
    },
    sync() {
      folders?.sync();
    },
    close() {
      if (timer !== undefined) clearTimeout(timer);
      folders?.close();
      for (const w of recursive) w.close();
    },
  };
}
