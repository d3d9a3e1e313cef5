import type { CallLog } from '../../audit/call-log.js';
import type { AuditEvent } from '../../audit/types.js';
import type { Logger } from '../../log.js';

/** Polls a shared log for decisions another server process recorded for calls waiting here. */
export interface DecisionWatcher {
  watch(callId: string): void;
  unwatch(callId: string): void;
  close(): void;
}

/**
 * Every `everyMs` while any call is watched (and never otherwise), one query for the `approval_decided` events of
 * the watched calls; each one found is handed to `onDecision` (which decides whether it is news). A failing read
 * is logged once until one succeeds again.
 */
export function createDecisionWatcher(o: {
  audit: () => Promise<CallLog>;
  everyMs: number;
  log: Logger;
  onDecision: (ev: AuditEvent<'approval_decided'>) => Promise<void>;
}): DecisionWatcher {
  const watched = new Set<string>();
  let timer: NodeJS.Timeout | undefined;
  let busy = false;
  let failing = false;
  let closed = false;

  const poll = async () => {
    timer = undefined;
    busy = true;
    try {
      const audit = await o.audit();
      const found = (await audit.replicas?.decisionsOf([...watched])) ?? [];
      failing = false;
      for (const ev of found) {
        if (!watched.has(ev.callId ?? '')) continue;
        await o
          .onDecision(ev)
          .catch((err: unknown) =>
            o.log.error({ err, callId: ev.callId }, 'could not take a decision recorded elsewhere'),
          );
      }
    } catch (err) {
      if (!failing) o.log.warn({ err }, 'could not read decisions recorded by other replicas');
      failing = true;
    }
    busy = false;
    schedule();
  };

  function schedule() {
    if (closed || busy || timer !== undefined || watched.size === 0) return;
    timer = setTimeout(() => void poll(), o.everyMs);
    timer.unref();
  }

  return {
    watch(callId) {
      watched.add(callId);
      schedule();
    },
    unwatch(callId) {
      watched.delete(callId);
    },
    close() {
      closed = true;
      watched.clear();
      clearTimeout(timer);
    },
  };
}
