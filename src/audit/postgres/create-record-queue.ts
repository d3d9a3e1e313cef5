import { SkillsError } from '../../errors.js';
import type { Logger } from '../../log.js';

/** What a record queue has done since it started. */
export interface RecordCounts {
  /** Groups waiting now (not yet in a transaction). */
  queued: number;
  written: number;
  /** Refused on arrival: the queue was full. */
  shed: number;
  /** In a transaction that failed (the database unreachable, or it refused the batch). */
  failed: number;
}

export interface RecordQueue<G> {
  /** Queues groups; resolves, once their transaction ended, with per group the error that kept it out (or undefined). */
  add(groups: readonly G[]): Promise<(Error | undefined)[]>;
  counts(): RecordCounts;
  /** Resolves once what is queued now has been tried. */
  drain(): Promise<void>;
}

export interface RecordQueueOptions<G> {
  /** Writes groups in one transaction: per group its refusal; rejects when none was written. */
  write(groups: readonly G[]): Promise<(Error | undefined)[]>;
  /** Groups that may wait at most; past that, new ones are shed. */
  maxQueued: number;
  /** Groups per transaction at most. */
  maxBatch: number;
  log?: Logger;
  /** How often, at most, the records lost are logged (default 10 s). */
  reportEveryMs?: number;
}

const shedError = () =>
  new SkillsError(
    'AUDIT_FAILED',
    'audit log (PostgreSQL): read-only call not recorded: too many records are waiting for the database',
    { details: { shed: true } },
  );

/**
 * The records nobody waits on (read-only calls), written one transaction at a time with everything waiting (up to
 * `maxBatch` groups), so they hold one connection and at most one place in the chain lock's queue per process: what
 * a run needs (lease, gate reads, its own records) never waits behind them. Bounded: past `maxQueued` waiting groups,
 * new ones are shed rather than held in memory. What is lost (shed, or in a failed transaction) is counted and
 * logged at most once per `reportEveryMs`, with the counts since the last line and in all.
 */
export function createRecordQueue<G>(o: RecordQueueOptions<G>): RecordQueue<G> {
  let queue: { group: G; settle: (e: Error | undefined) => void }[] = [];
  let running: Promise<void> | undefined;
  const total = { written: 0, shed: 0, failed: 0 };
  const since = { shed: 0, failed: 0 };
  let quietUntil = 0;
  let pending: NodeJS.Timeout | undefined;
  let lastError: string | undefined;
  const every = o.reportEveryMs ?? 10_000;

  const report = () => {
    pending = undefined;
    if (since.shed === 0 && since.failed === 0) return;
    o.log?.warn(
      { shed: since.shed, failed: since.failed, total: { ...total }, queued: queue.length, err: lastError },
      'read-only calls not audited: the audit database is out of reach or behind',
    );
    since.shed = since.failed = 0;
    quietUntil = performance.now() + every;
  };
  const lost = (kind: 'shed' | 'failed', n: number, err?: unknown) => {
    total[kind] += n;
    since[kind] += n;
    if (err !== undefined) lastError = err instanceof Error ? err.message : 'unknown error';
    if (performance.now() >= quietUntil) report();
    else pending ??= setTimeout(report, quietUntil - performance.now()).unref();
  };

  const run = async () => {
    while (queue.length > 0) {
      const batch = queue.slice(0, o.maxBatch);
      queue = queue.slice(batch.length);
      try {
        const errors = await o.write(batch.map((b) => b.group));
        batch.forEach((b, i) => b.settle(errors[i]));
        const refused = errors.filter((e) => e !== undefined).length;
        total.written += batch.length - refused;
      } catch (err) {
        lost('failed', batch.length, err);
        const e = err instanceof Error ? err : new Error('audit write failed');
        for (const b of batch) b.settle(e);
      }
    }
    running = undefined;
  };

  return {
    add(groups) {
      const out = groups.map((group) => {
        if (queue.length >= o.maxQueued) {
          lost('shed', 1);
          return Promise.resolve<Error | undefined>(shedError());
        }
        return new Promise<Error | undefined>((settle) => queue.push({ group, settle }));
      });
      if (queue.length > 0) running ??= run();
      return Promise.all(out);
    },
    counts: () => ({ queued: queue.length, ...total }),
    drain: async () => {
      while (running !== undefined) await running;
    },
  };
}
