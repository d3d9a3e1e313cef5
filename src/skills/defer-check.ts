import { performance } from 'node:perf_hooks';
import { isUnchanged, type FolderLoad } from './folder-load.js';

/**
 * The stamps a load left unchecked (`loadCatalog`'s `unchecked`: the loads reused on their head alone), checked off
 * the first answers' path in batches that yield to the event loop, or all at once when something needs them first.
 */
export interface DeferredCheck {
  /**
   * Checks every load not checked yet, now, and returns the folders whose load no longer holds (empty when all
   * do). The check is then over: `start`'s callback is not called.
   */
  finish(): ReadonlySet<string>;
  /** Checks the loads in batches; `done` gets the folders whose load no longer holds once all are checked. */
  start(done: (changed: ReadonlySet<string>) => void): void;
  /** Stops checking (the loads were checked in full since, by a reload). */
  close(): void;
}

export function deferCheck(loads: readonly FolderLoad[], sliceMs = 2): DeferredCheck {
  const changed = new Set<string>();
  let next = 0;
  let over = false;
  let pending: NodeJS.Immediate | undefined;
  let done: ((changed: ReadonlySet<string>) => void) | undefined;
  const check = (load: FolderLoad) => {
    if (!isUnchanged(load, 'rest')) changed.add(load.dir);
  };
  const stop = () => {
    over = true;
    if (pending !== undefined) clearImmediate(pending);
    pending = undefined;
  };
  const step = () => {
    pending = undefined;
    if (over) return;
    const until = performance.now() + sliceMs;
    while (next < loads.length) {
      check(loads[next++]!);
      if ((next & 7) === 0 && performance.now() >= until) break;
    }
    if (next < loads.length) {
      pending = setImmediate(step);
      return;
    }
    over = true;
    done?.(changed);
  };
  return {
    finish() {
      if (!over) while (next < loads.length) check(loads[next++]!);
      stop();
      return changed;
    },
    start(callback) {
      if (over) return;
      done = callback;
      pending ??= setImmediate(step);
    },
    close: stop,
  };
}
