import type { Logger } from '../log.js';
import type { Catalog } from './catalog.js';
import { diffCatalogs, type CatalogDiff } from './diff-catalogs.js';

export interface ReloadOptions {
  /** Loads a fresh catalog (normally `() => loadCatalog(roots)`). */
  load: () => Catalog;
  current: () => Catalog;
  /** Called with the new catalog when what is served changed. */
  onChange: (next: Catalog, diff: CatalogDiff) => void;
  /**
   * Called with a catalog that serves the same skills but read some folder again (newer stamps, a new empty
   * folder): no client needs telling, but the next reload and the watches should start from it. Without it, such a
   * catalog is dropped.
   */
  onReread?: (next: Catalog) => void;
  log: Logger;
}

/**
 * Loads the catalog again and hands it to `onChange` when what is served changed (else to `onReread` when a folder
 * was read again). Never throws: a failed reload keeps the current catalog. Returns whether what is served changed.
 */
export function reloadCatalog(opts: ReloadOptions): boolean {
  const { log } = opts;
  let next: Catalog;
  try {
    next = opts.load();
  } catch (err) {
    log.error({ err }, 'skill reload failed; still serving the previous skills');
    return false;
  }
  const current = opts.current();
  const diff = diffCatalogs(current, next);
  if (diff.added.length + diff.removed.length + diff.changed.length === 0) {
    if (opts.onReread !== undefined && isReread(current, next)) opts.onReread(next);
    return false;
  }
  for (const f of next.findings) log.warn({ path: f.path, rule: f.rule }, f.message);
  log.info({ ...diff, count: next.skills.length }, 'skills reloaded');
  opts.onChange(next, diff);
  return true;
}

/** True when `next` holds a folder load `current` does not (a load reused unchanged is the same object). */
function isReread(current: Catalog, next: Catalog): boolean {
  if (current.folders.length !== next.folders.length) return true;
  for (let i = 0; i < next.folders.length; i++) if (current.folders[i] !== next.folders[i]) return true;
  return false;
}
