import { watch, type FSWatcher } from 'node:fs';
import type { Logger } from '../log.js';
import type { Catalog } from './catalog.js';
import type { CatalogDiff } from './diff-catalogs.js';
import { reloadCatalog } from './reload-catalog.js';

export type { CatalogDiff } from './diff-catalogs.js';

export interface CatalogWatcher {
  close(): void;
}

export interface WatchOptions {
  roots: readonly string[];
  /** Loads a fresh catalog (normally `() => loadCatalog(roots)`). */
  load: () => Catalog;
  /** Called with the new catalog after a change on disk that altered what is served. */
  onChange: (next: Catalog, diff: CatalogDiff) => void;
  current: () => Catalog;
  log: Logger;
  debounceMs?: number;
}

/**
 * Watches the roots (recursively) and reloads the catalog after changes settle. A broken edit only drops or keeps
 * back the broken skill: the reload itself never throws, and a failed reload keeps the current catalog.
 */
export function watchCatalog(opts: WatchOptions): CatalogWatcher {
  const { log, debounceMs = 150 } = opts;
  let timer: NodeJS.Timeout | undefined;
  const reload = () => {
    timer = undefined;
    reloadCatalog(opts);
  };
  const schedule = () => {
    if (timer !== undefined) clearTimeout(timer);
    timer = setTimeout(reload, debounceMs);
  };
  const watchers: FSWatcher[] = [];
  for (const root of opts.roots) {
    try {
      const w = watch(root, { recursive: true, persistent: false }, schedule);
      w.on('error', (err) =>
        log.warn({ err, root }, 'watching a skills root failed; hot reload is off for it'),
      );
      watchers.push(w);
    } catch (err) {
      log.warn({ err, root }, 'cannot watch skills root; hot reload is off for it');
    }
  }
  return {
    close() {
      if (timer !== undefined) clearTimeout(timer);
      for (const w of watchers) w.close();
    },
  };
}
