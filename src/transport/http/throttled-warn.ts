import type { Logger } from '../../log.js';

/** How long after a logged refusal the same kind of refusal is only counted. */
const WINDOW_MS = 10_000;

/** Logs a warning of a kind a client can make the server repeat (a refused request) without flooding the log. */
export type ThrottledWarn = (fields: Record<string, unknown>, msg: string) => void;

/**
 * Warnings keyed by their message (a fixed string, never client data): the first of each is logged, then for
 * `windowMs` the same message is only counted, and the next one logged after that says how many were left out
 * (`suppressed`). A client sending a stream of bad requests costs a log line per window, not one per request.
 */
export function createThrottledWarn(log: Logger, windowMs = WINDOW_MS, now = Date.now): ThrottledWarn {
  const quietUntil = new Map<string, { until: number; suppressed: number }>();
  return (fields, msg) => {
    const t = now();
    const q = quietUntil.get(msg);
    if (q !== undefined && t < q.until) {
      q.suppressed++;
      return;
    }
    log.warn(q === undefined || q.suppressed === 0 ? fields : { ...fields, suppressed: q.suppressed }, msg);
    quietUntil.set(msg, { until: t + windowMs, suppressed: 0 });
  };
}
