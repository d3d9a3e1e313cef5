import { createHash } from 'node:crypto';
import { join } from 'node:path';
import type { Logger } from '../log.js';
import type { Catalog, Listed } from './catalog.js';
import type { FolderLoad } from './folder-load.js';
import { readCatalogCache, type CatalogCacheKey } from './read-catalog-cache.js';
import { writeCatalogCache } from './write-catalog-cache.js';

export interface CatalogCache {
  /**
   * The folder loads the file held, by folder (empty without a usable file): the first load's `reuse`; and the
   * discovery that found them, when the file holds one (its `listed`). Given once: the cache lets go of them, and
   * later loads reuse the catalog's own.
   */
  take(): { loads: ReadonlyMap<string, FolderLoad>; listed?: Listed };
  /** Saves the catalog after a while (off the first answers' path), unless the file already holds it. */
  save(catalog: Catalog): void;
  /** Writes a pending save now (when the server stops). */
  flush(): void;
}

export interface CatalogCacheOptions extends CatalogCacheKey {
  /** The server's state folder: the file goes in its `catalog-cache/` folder, named after the build and roots. */
  stateDir: string;
  log: Logger;
  /** How long a save waits (default 2 s). */
  delayMs?: number;
}

/**
 * The cache file of a build serving a set of roots: two builds in use side by side (another version, a checkout
 * being worked on) each keep their own instead of replacing each other's at every start.
 */
export const catalogCacheFile = (stateDir: string, key: CatalogCacheKey): string =>
  join(
    stateDir,
    'catalog-cache',
    `${createHash('sha256')
      .update(JSON.stringify([key.build, key.roots]))
      .digest('hex')
      .slice(0, 32)}.json`,
  );

/**
 * The start-up cache of the catalog: what each skill folder gave when it was last loaded, with the stamps that
 * tell whether it still holds (see `loadCatalog`'s `reuse`). Reading it never fails (a file it cannot trust in
 * full is not used, and is replaced by the next save); a save that fails is logged and the server goes on.
 */
export function openCatalogCache(opts: CatalogCacheOptions): CatalogCache {
  const { log } = opts;
  const key: CatalogCacheKey = { build: opts.build, roots: opts.roots };
  const file = catalogCacheFile(opts.stateDir, key);
  const read = readCatalogCache(file, key);
  if (read.problem !== undefined) log.debug({ file, problem: read.problem }, 'catalog cache not used');
  let loads: Map<string, FolderLoad> | undefined = read.loads;
  let listed = read.listed;
  // The stamps the file holds now: a catalog made only of those loads needs no save.
  let saved = new Set([...read.loads.values()].map((l) => l.stamps));
  let pending: Catalog | undefined;
  let timer: NodeJS.Timeout | undefined;
  const write = () => {
    if (timer !== undefined) clearTimeout(timer);
    timer = undefined;
    const catalog = pending;
    pending = undefined;
    if (catalog === undefined) return;
    try {
      const count = writeCatalogCache(file, key, catalog);
      saved = new Set(catalog.folders.map((l) => l.stamps).filter((s) => s !== undefined));
      log.debug({ file, folders: count }, 'catalog cache saved');
    } catch (err) {
      log.warn({ err, file }, 'could not save the catalog cache; the next start reads every skill folder');
    }
  };
  return {
    take() {
      const taken = loads ?? new Map<string, FolderLoad>();
      const found = listed;
      loads = undefined;
      listed = undefined;
      return found === undefined ? { loads: taken } : { loads: taken, listed: found };
    },
    save(catalog) {
      const stamped = catalog.folders.filter((l) => l.stamps !== undefined);
      if (stamped.length === saved.size && stamped.every((l) => saved.has(l.stamps))) {
        pending = undefined;
        return;
      }
      pending = catalog;
      if (timer === undefined) {
        timer = setTimeout(write, opts.delayMs ?? 2_000);
        timer.unref();
      }
    },
    flush: write,
  };
}
