import type { CallResult } from './call-result.js';

/** How long after its timeout an approval's refusal is kept for the client's late retry (the continuation's TTL). */
const KEEP_MS = 60_000;

/**
 * The refusals of approvals that timed out, kept for a while for the session that asked: a modern-era client that
 * answers the form after skills-mcp stopped waiting retries later, and gets the timeout refusal with its call id,
 * not a bare "no longer pending". At most `max` are kept (the oldest go first); each is taken once.
 */
export function createLateResults(max: number) {
  const kept = new Map<string, { sessionId: string; result: CallResult; timer: NodeJS.Timeout }>();
  const drop = (callId: string) => {
    const k = kept.get(callId);
    if (k === undefined) return;
    clearTimeout(k.timer);
    kept.delete(callId);
  };
  return {
    keep(callId: string, sessionId: string, result: CallResult): void {
      drop(callId);
      while (kept.size >= Math.max(1, max)) drop(kept.keys().next().value as string);
      const timer = setTimeout(() => drop(callId), KEEP_MS);
      timer.unref();
      kept.set(callId, { sessionId, result, timer });
    },
    take(callId: string, sessionId: string): CallResult | undefined {
      const k = kept.get(callId);
      if (k === undefined || k.sessionId !== sessionId) return undefined;
      drop(callId);
      return k.result;
    },
    clear(): void {
      for (const id of [...kept.keys()]) drop(id);
    },
  };
}
