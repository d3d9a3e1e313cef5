import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createRecordQueue } from '../../src/audit/postgres/create-record-queue.js';
import { createLogger } from '../../src/log.js';

function logLines() {
  const lines: { msg: string; shed?: number; failed?: number }[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const l of chunk.toString('utf8').split('\n')) if (l !== '') lines.push(JSON.parse(l) as never);
      done();
    },
  });
  return { log: createLogger('debug', sink), lines };
}

/** A write that holds each batch until released, and remembers the batches it got. */
function heldWrites() {
  const batches: number[][] = [];
  const waiting: (() => void)[] = [];
  return {
    batches,
    release: () => waiting.splice(0).forEach((go) => go()),
    write: (groups: readonly number[]) =>
      new Promise<(Error | undefined)[]>((resolve) => {
        batches.push([...groups]);
        waiting.push(() => resolve(groups.map(() => undefined)));
      }),
  };
}

describe('the queue of read-only records', () => {
  it('writes one batch at a time, with everything that waited meanwhile', async () => {
    const w = heldWrites();
    const q = createRecordQueue<number>({ write: w.write, maxQueued: 100, maxBatch: 3 });
    const first = q.add([1]);
    const rest = q.add([2, 3, 4, 5]);
    expect(w.batches).toEqual([[1]]); // the second waits for the first to end
    w.release();
    await first;
    await new Promise((r) => setImmediate(r));
    expect(w.batches).toEqual([[1], [2, 3, 4]]);
    w.release();
    await new Promise((r) => setImmediate(r));
    w.release();
    expect(await rest).toEqual([undefined, undefined, undefined, undefined]);
    expect(w.batches).toEqual([[1], [2, 3, 4], [5]]);
    expect(q.counts()).toEqual({ queued: 0, written: 5, shed: 0, failed: 0 });
  });

  it('sheds what arrives past its bound, counts it and says so once per interval', async () => {
    const w = heldWrites();
    const { log, lines } = logLines();
    const q = createRecordQueue<number>({
      write: w.write,
      maxQueued: 2,
      maxBatch: 10,
      log,
      reportEveryMs: 60_000,
    });
    const held = q.add([0]); // in its transaction
    const waiting = q.add([1, 2]);
    const shed = await q.add([3, 4, 5]);
    expect(shed.map((e) => e?.message)).toEqual(
      Array(3).fill(
        'audit log (PostgreSQL): read-only call not recorded: too many records are waiting for the database',
      ),
    );
    await q.add([6]);
    const said = lines.filter((l) => l.msg.startsWith('read-only calls not audited'));
    expect(said).toHaveLength(1); // the first loss at once; the next ones only counted until the interval ends
    expect(said[0]).toMatchObject({ shed: 1 });
    expect(q.counts()).toMatchObject({ queued: 2, shed: 4 });
    w.release();
    await held;
    await new Promise((r) => setImmediate(r));
    w.release();
    expect(await waiting).toEqual([undefined, undefined]);
  });

  it('fails a batch whose transaction failed, and goes on with the next', async () => {
    let calls = 0;
    const q = createRecordQueue<number>({
      maxQueued: 10,
      maxBatch: 10,
      write: (groups) =>
        calls++ === 0
          ? Promise.reject(new Error('the audit database is unreachable'))
          : Promise.resolve(groups.map(() => undefined)),
    });
    expect((await q.add([1, 2])).map((e) => e?.message)).toEqual([
      'the audit database is unreachable',
      'the audit database is unreachable',
    ]);
    expect(await q.add([3])).toEqual([undefined]);
    expect(q.counts()).toEqual({ queued: 0, written: 1, shed: 0, failed: 2 });
  });
});
