/** A stop request: the signal, and how many have come so far (a second one means "stop without waiting"). */
export type StopHandler = (signal: NodeJS.Signals, count: number) => void;

/** SIGINT and SIGTERM, listened for from the start of `serve` until it returns. */
export interface StopSignals {
  /** Hands every signal to `handler` from now on, and at once those that came before it was set. */
  onSignal(handler: StopHandler): void;
  /** Stops listening: the process's default action applies again. */
  dispose(): void;
}

/**
 * Listens for SIGINT/SIGTERM before anything starts. Without a listener Node ends the process at once on these
 * signals, so one that arrived while the server was still starting (the console up, the HTTP port not yet) used to
 * kill it mid-start-up, exit 143, its audit session left open. A signal that comes before the transport is serving
 * is kept and handed over when the transport sets its handler: the server then stops as it would later, exit 0.
 */
export function listenForStopSignals(): StopSignals {
  const early: [NodeJS.Signals, number][] = [];
  let handler: StopHandler | undefined;
  let count = 0;
  const listener = (signal: NodeJS.Signals) => {
    count++;
    if (handler === undefined) early.push([signal, count]);
    else handler(signal, count);
  };
  process.on('SIGINT', listener);
  process.on('SIGTERM', listener);
  return {
    onSignal(h) {
      handler = h;
      for (const [signal, n] of early.splice(0)) h(signal, n);
    },
    dispose() {
      process.off('SIGINT', listener);
      process.off('SIGTERM', listener);
    },
  };
}
