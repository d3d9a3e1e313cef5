import { describe, expect, it } from 'vitest';
import { prepareChild } from '../../src/sandbox/run-child.js';

/** `cat` in a prepared child: what it prints is what its stdin was given. */
const startCat = (stdin: Promise<Uint8Array>) =>
  prepareChild({ command: 'cat', args: [], env: { PATH: process.env.PATH ?? '/usr/bin:/bin' } }).start({
    stdin,
    wallTimeMs: 10_000,
    maxOutputBytes: 1024,
  });

describe("a prepared child's stdin still to come", () => {
  it('writes its bytes once they come, then closes it', async () => {
    let give: (b: Uint8Array) => void = () => undefined;
    const later = new Promise<Uint8Array>((resolve) => (give = resolve));
    const run = startCat(later);
    give(Buffer.from('the input'));
    const out = await run;
    expect(out.exitCode).toBe(0);
    expect(out.stdout.toString()).toBe('the input');
  });

  it('closes it unwritten when its bytes never come (a run called off)', async () => {
    const out = await startCat(Promise.reject(new Error('called off')));
    expect(out.exitCode).toBe(0);
    expect(out.bytes.stdout).toBe(0);
  });
});
