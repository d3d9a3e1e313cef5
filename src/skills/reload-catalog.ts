import type { Logger } from '../log.js';
import type { Catalog } from './catalog.js';
import { diffCatalogs, type CatalogDiff } from './diff-catalogs.js';

export interface ReloadOptions {
  /** Loads a fresh catalog (normally `() => loadCatalog(roots)`). */
  load: () => Catalog;
  current: () => Catalog;
  /** Called with the new catalog when what is served changed. */
  onChange: (next: Catalog, diff: CatalogDiff) => void;
  log: Logger;
}

/**
 * Loads the catalog again and hands it to `onChange` when what is served changed. Never throws: a failed reload
 * keeps the current catalog. Returns whether anything changed.
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
  const diff = diffCatalogs(opts.current(), next);
  if (diff.added.length + diff.removed.length + diff.changed.length === 0) return false;
  for (const f of next.findings) log.warn({ path: f.path, rule: f.rule }, f.message);
  log.info({ ...diff, count: next.skills.length }, 'skills reloaded');
  opts.onChange(next, diff);
  return true;
}
