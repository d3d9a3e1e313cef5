import { totalmem } from 'node:os';
import { SkillsError } from '../errors.js';

/** Admission for sandboxed runs: the memory their profiles may use, machine-wide, and a count per session. */
export interface RunSlots {
  /**
   * Waits (up to the configured time) until a run of `memoryMiB` fits, then returns its release function
   * (idempotent). Throws `RUNS_BUSY` when it does not fit in time, or when `signal` aborts the wait.
   */
  acquire(sessionId: string, memoryMiB: number, signal?: AbortSignal): Promise<() => void>;
  /** Runs going on now. */
  running(): number;
}

export interface RunSlotLimits {
  /** MiB the running sandboxes' memory limits may add up to. */
  memoryMiB: number;
  /** Runs at once per session. */
  perSession: number;
  /** How long a run waits for room before it is refused. */
  waitMs: number;
}

/** `share` of this machine's memory, in MiB: the default budget for the sum of running sandboxes' memory limits. */
export const machineMemoryShareMiB = (share: number): number =>
  Math.max(1, Math.floor((totalmem() / 2 ** 20) * share));

interface Waiter {
  sessionId: string;
  memoryMiB: number;
  grant: () => void;
}

/**
 * Runs are admitted while the memory limits of the running sandboxes (their profiles' `memoryMiB`) fit in the
 * budget and the session has fewer than `perSession` running; one run is always admitted when nothing runs, so a
 * profile larger than the budget still runs alone. Waiters are served in arrival order.
 */
export function createRunSlots(limits: RunSlotLimits): RunSlots {
  let usedMiB = 0;
  let total = 0;
  const perSession = new Map<string, number>();
  const queue: Waiter[] = [];

  const fits = (sessionId: string, memoryMiB: number) =>
    (perSession.get(sessionId) ?? 0) < limits.perSession &&
    (total === 0 || usedMiB + memoryMiB <= limits.memoryMiB);

  const take = (sessionId: string, memoryMiB: number) => {
    usedMiB += memoryMiB;
    total++;
    perSession.set(sessionId, (perSession.get(sessionId) ?? 0) + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      usedMiB -= memoryMiB;
      total--;
      const left = (perSession.get(sessionId) ?? 1) - 1;
      if (left === 0) perSession.delete(sessionId);
      else perSession.set(sessionId, left);
      for (let i = 0; i < queue.length;) {
        const w = queue[i]!;
        if (fits(w.sessionId, w.memoryMiB)) {
          queue.splice(i, 1);
          w.grant();
        } else i++;
      }
    };
  };

  const busy = (why: string) =>
    new SkillsError('RUNS_BUSY', `not run: ${why}`, {
      hint: 'Nothing was run. Call the tool again in a moment, or run fewer scripts at once.',
    });

  return {
    running: () => total,
    acquire(sessionId, memoryMiB, signal) {
      if (queue.length === 0 && fits(sessionId, memoryMiB))
        return Promise.resolve(take(sessionId, memoryMiB));
      return new Promise((resolve, reject) => {
        const w: Waiter = {
          sessionId,
          memoryMiB,
          grant: () => {
            clearTimeout(timer);
            signal?.removeEventListener('abort', onAbort);
            resolve(take(sessionId, memoryMiB));
          },
        };
        const leave = (err: SkillsError) => {
          const i = queue.indexOf(w);
          if (i >= 0) queue.splice(i, 1);
          signal?.removeEventListener('abort', onAbort);
          reject(err);
        };
        const onAbort = () => {
          clearTimeout(timer);
          leave(busy('the request was cancelled while waiting for a free sandbox'));
        };
        const timer = setTimeout(() => {
          const mine = perSession.get(sessionId) ?? 0;
          leave(
            busy(
              mine >= limits.perSession
                ? `this session already runs ${mine} scripts at once (limit ${limits.perSession})`
                : `the running sandboxes use the server's whole memory budget (${limits.memoryMiB} MiB)`,
            ),
          );
        }, limits.waitMs);
        timer.unref();
        signal?.addEventListener('abort', onAbort, { once: true });
        queue.push(w);
      });
    },
  };
}
