import type { CallLog } from '../audit/call-log.js';
import type { AppendInput } from '../audit/types.js';
import type { Logger } from '../log.js';

/**
 * The ends of runs the audit log did not take (disk full, the writer stopped): the script ran, so its
 * `tool_call_finished` is kept here and written as soon as the log takes writes again. Retried on a timer with
 * backoff (from `firstMs`, doubling up to `maxMs`); a session's are tried once more before the session is ended (so
 * the end is never recorded as `interrupted`), and all once more at close. What still cannot be written is logged
 * in full (the payload holds digests, sizes and codes only), so the operator holds the record.
 */
export interface UnrecordedFinishes {
  /**
   * Keeps the end of a call whose `tool_call_finished` was refused: `tries` are that event's alternatives, the
   * first the log takes is written (the full record, then one without the artifact names).
   */
  keep(tries: readonly AppendInput[]): void;
  /** Tries now to write the kept ends of this session (all sessions without one); resolves when tried. */
  flush(sessionId?: string): Promise<void>;
  /** How many ends wait. */
  size(): number;
  /** A last try for all, then every end still unwritten is logged as an error; the timer stops. */
  close(): Promise<void>;
}

/** At most this many ends wait in memory; one more is logged in full and dropped. */
const MAX_KEPT = 10_000;

export function createUnrecordedFinishes(deps: {
  audit: () => Promise<CallLog>;
  log: Logger;
  firstMs?: number;
  maxMs?: number;
}): UnrecordedFinishes {
  const firstMs = deps.firstMs ?? 250;
  const maxMs = deps.maxMs ?? 5_000;
  const kept = new Map<string, readonly AppendInput[]>();
  let delay = firstMs;
  let timer: NodeJS.Timeout | undefined;
  let trying: Promise<void> | undefined;
  let closed = false;

  const lost = (tries: readonly AppendInput[], err: unknown, why: string) =>
    deps.log.error({ err, callId: tries[0]?.callId, sessionId: tries[0]?.sessionId, event: tries[0] }, why);

  /** True once written (or refused for good: a record the log will never take is logged, not retried). */
  const writeOne = async (audit: CallLog, tries: readonly AppendInput[]): Promise<boolean> => {
    let last: unknown;
    for (const ev of tries) {
      try {
        await audit.append(ev);
        deps.log.warn({ callId: ev.callId }, 'recorded the end of a run the audit log had refused');
        return true;
      } catch (e) {
        last = e;
        // Refused by the log's rules (not its storage): the next alternative may pass.
        if (!isRuleRefusal(e)) return false;
      }
    }
    lost(tries, last, 'the audit log refuses the end of a run: it stays unrecorded');
    return true;
  };

  const attempt = async (sessionId?: string): Promise<void> => {
    if (kept.size === 0) return;
    let audit: CallLog;
    try {
      audit = await deps.audit();
    } catch {
      return;
    }
    for (const [callId, tries] of [...kept]) {
      if (sessionId !== undefined && tries[0]?.sessionId !== sessionId) continue;
      if (!(await writeOne(audit, tries))) return;
      kept.delete(callId);
    }
  };

  const schedule = () => {
    if (closed || timer !== undefined || kept.size === 0) return;
    timer = setTimeout(() => {
      timer = undefined;
      const before = kept.size;
      void run().then(() => {
        delay = kept.size < before ? firstMs : Math.min(maxMs, delay * 2);
        schedule();
      });
    }, delay);
    timer.unref();
  };

  /** One attempt at a time: a flush waits for the one under way, then tries itself. */
  const run = async (sessionId?: string): Promise<void> => {
    while (trying !== undefined) await trying;
    trying = attempt(sessionId).finally(() => (trying = undefined));
    await trying;
  };

  return {
    keep(tries) {
      const callId = tries[0]?.callId;
      if (callId === undefined || callId === null) return;
      if (kept.size >= MAX_KEPT || closed) {
        lost(tries, undefined, 'too many run ends wait for the audit log: this one is not kept');
        return;
      }
      deps.log.error({ callId }, 'the audit log refused the end of a run: kept, to be written when it can');
      kept.set(callId, tries);
      delay = firstMs;
      schedule();
    },
    flush: (sessionId) => run(sessionId),
    size: () => kept.size,
    async close() {
      closed = true;
      clearTimeout(timer);
      timer = undefined;
      await run();
      for (const tries of kept.values())
        lost(tries, undefined, 'the end of a run was never recorded: the audit log did not take it');
      kept.clear();
    },
  };
}

/** A refusal by the store's rules (order, schema, privacy), as opposed to storage that failed. */
function isRuleRefusal(e: unknown): boolean {
  const message = e instanceof Error ? e.message : '';
  return /^(audit refused |refusing to store )/.test(message);
}
