import { Writable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import { getHeapStatistics } from 'node:v8';
import { describe, expect, it } from 'vitest';
import { createLogger } from '../../src/log.js';
import { createMemoryReclaimer } from '../../src/memory-reclaimer.js';
import { waitFor } from '../helpers/wait-for.js';

const MiB = 1024 * 1024;
const used = () => getHeapStatistics().used_heap_size;

/** A logger whose lines the test reads. */
function capturedLog() {
  const lines: { msg: string }[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const l of chunk.toString('utf8').split('\n'))
        if (l !== '') lines.push(JSON.parse(l) as { msg: string });
      done();
    },
  });
  return {
    log: createLogger('debug', sink),
    reclaims: () => lines.filter((l) => l.msg.startsWith('reclaimed')),
  };
}

/** ~60 MiB of objects that live long enough to reach the old generation, then become garbage. */
function leaveOldGarbage(): void {
  let keep: { i: number; s: string }[] | undefined = [];
  for (let i = 0; i < 600_000; i++) keep.push({ i, s: `item ${i}` });
  expect(keep.length).toBe(600_000);
  keep = undefined;
}

describe('memory reclaimer', () => {
  it('collects the garbage of a busy spell once the server has been idle for a while', async () => {
    const { log, reclaims } = capturedLog();
    const r = createMemoryReclaimer({ idleMs: 50, log, betweenMs: 50 });
    r.busy();
    leaveOldGarbage();
    const before = used();
    r.idle();
    await waitFor(() => reclaims().length > 0, 5_000, 'the collection');
    expect(reclaims()).toHaveLength(1);
    expect(before - used()).toBeGreaterThan(30 * MiB);
    r.stop();
  });

  it('waits while requests keep coming, and does nothing when nothing was served', async () => {
    const { log, reclaims } = capturedLog();
    const r = createMemoryReclaimer({ idleMs: 100, log, betweenMs: 10 });
    r.idle();
    await sleep(200);
    expect(reclaims()).toHaveLength(0);
    for (let i = 0; i < 4; i++) {
      r.busy();
      r.idle();
      await sleep(40);
    }
    expect(reclaims()).toHaveLength(0);
    await waitFor(() => reclaims().length > 0, 5_000, 'the collection once the requests stopped');
    expect(reclaims()).toHaveLength(1);
    // Idle again without having served anything since: no further collection.
    r.idle();
    await sleep(200);
    expect(reclaims()).toHaveLength(1);
    r.stop();
  });

  it('stops on shutdown', async () => {
    const { log, reclaims } = capturedLog();
    const r = createMemoryReclaimer({ idleMs: 50, log, betweenMs: 10 });
    r.busy();
    r.idle();
    r.stop();
    await sleep(200);
    expect(reclaims()).toHaveLength(0);
  });
});
