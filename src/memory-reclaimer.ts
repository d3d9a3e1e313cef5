import { getHeapStatistics, setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import type { Logger } from './log.js';

const heapUsed = (): number | undefined => {
  try {
    return getHeapStatistics().used_heap_size;
  } catch {
    return undefined;
  }
};

/** Told when the server starts and stops having requests in flight. */
export interface MemoryReclaimer {
  busy(): void;
  idle(): void;
  stop(): void;
}

/**
 * Two collections: the first frees the garbage; the second, once V8 sees a low allocation rate over its 5 s window,
 * also shrinks the young generation back.
 */
const COLLECTIONS = 2;

/**
 * A burst of HTTP clients grows V8's heap for the garbage it leaves behind (the audit log's writer thread, its own
 * heap for the events it wrote), and an idle isolate never collects it: no allocation, no GC. Once the server has been idle for `idleMs` after serving requests, this runs full
 * collections so the memory goes back to the OS. The `gc` function comes from a fresh `vm` context (the flag is set
 * at that moment, never at import); the main context's globals are untouched. Each collection is a pause of a few
 * tens of ms at a time nothing is being served.
 */
export function createMemoryReclaimer(o: {
  idleMs: number;
  log: Logger;
  /** Between the two collections. */
  betweenMs?: number;
}): MemoryReclaimer {
  const betweenMs = o.betweenMs ?? 6000;
  let gc: (() => void) | null | undefined;
  let timer: NodeJS.Timeout | undefined;
  let pending = 0;

  const collector = (): (() => void) | null => {
    if (gc !== undefined) return gc;
    try {
      setFlagsFromString('--expose-gc');
      const fn = runInNewContext('gc') as unknown;
      gc = typeof fn === 'function' ? (fn as () => void) : null;
    } catch {
      gc = null;
    }
    if (gc === null) o.log.debug('cannot reclaim memory when idle: no gc function');
    return gc;
  };

  const schedule = (ms: number) => {
    clearTimeout(timer);
    timer = setTimeout(collect, ms);
    timer.unref();
  };

  const collect = () => {
    timer = undefined;
    const fn = collector();
    if (fn === null) return void (pending = 0);
    // Only the heap: process.memoryUsage() also reads the resident set size, which needs a file descriptor and
    // throws when the process has none left (EMFILE) — in a timer, that would be uncaught.
    const before = heapUsed();
    fn();
    pending--;
    if (pending > 0) return schedule(betweenMs);
    o.log.debug({ heapUsedBefore: before, heapUsedAfter: heapUsed() }, 'reclaimed memory after a busy spell');
  };

  return {
    busy() {
      clearTimeout(timer);
      timer = undefined;
      pending = COLLECTIONS;
    },
    idle() {
      if (pending > 0) schedule(o.idleMs);
    },
    stop() {
      clearTimeout(timer);
      pending = 0;
    },
  };
}
