/** Counts requests in flight per client and overall. */
export interface ConcurrencyLimiter {
  /** Takes a slot for `key`; returns its release function (idempotent), or undefined when `key` is at the limit. */
  tryAcquire(key: string): (() => void) | undefined;
  /** Requests in flight, all clients together. */
  inFlight(): number;
  /** Resolves once nothing is in flight. */
  drained(): Promise<void>;
}

/** Told when the first request starts and when the last one ends. */
export interface ActivityListener {
  busy(): void;
  idle(): void;
}

export function createConcurrencyLimiter(perClient: number, activity?: ActivityListener): ConcurrencyLimiter {
  const counts = new Map<string, number>();
  let total = 0;
  let waiters: (() => void)[] = [];
  const tryAcquire = (key: string) => {
    const n = counts.get(key) ?? 0;
    if (n >= perClient) return undefined;
    counts.set(key, n + 1);
    if (total++ === 0) activity?.busy();
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const left = (counts.get(key) ?? 1) - 1;
      if (left === 0) counts.delete(key);
      else counts.set(key, left);
      total--;
      if (total === 0) {
        activity?.idle();
        const ready = waiters;
        waiters = [];
        for (const w of ready) w();
      }
    };
  };
  const drained = () => (total === 0 ? Promise.resolve() : new Promise<void>((r) => waiters.push(r)));
  return { tryAcquire, inFlight: () => total, drained };
}
