import { watch, type FSWatcher } from 'node:fs';
import type { Logger } from '../log.js';
import type { Catalog } from './catalog.js';
import type { Skill } from './types.js';

export interface CatalogDiff {
  added: string[];
  removed: string[];
  changed: string[];
}

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

const fingerprint = (s: Skill): string =>
  JSON.stringify([
    s.toolName,
    s.description,
    s.body,
    s.kind,
    s.entryPoint,
    s.inputSchema,
    s.dir,
    s.files,
    s.frontmatter,
  ]);

export function diffCatalogs(prev: Catalog, next: Catalog): CatalogDiff {
  const before = new Map(prev.skills.map((s) => [s.name, fingerprint(s)]));
  const after = new Map(next.skills.map((s) => [s.name, fingerprint(s)]));
  return {
    added: [...after.keys()].filter((n) => !before.has(n)),
    removed: [...before.keys()].filter((n) => !after.has(n)),
    changed: [...after.keys()].filter((n) => before.has(n) && before.get(n) !== after.get(n)),
  };
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
    let next: Catalog;
    try {
      next = opts.load();
    } catch (err) {
      log.error({ err }, 'skill reload failed; still serving the previous skills');
      return;
    }
    const diff = diffCatalogs(opts.current(), next);
    if (diff.added.length + diff.removed.length + diff.changed.length === 0) return;
    for (const f of next.findings) log.warn({ path: f.path, rule: f.rule }, f.message);
    log.info({ ...diff, count: next.skills.length }, 'skills reloaded');
    opts.onChange(next, diff);
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
