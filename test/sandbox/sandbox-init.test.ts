import { spawn } from 'node:child_process';
import { afterEach, describe, expect, it } from 'vitest';
import { endSandbox, identifyInit } from '../../src/sandbox/sandbox-init.js';
import { isAlive } from './helpers.js';

const children: Array<ReturnType<typeof spawn>> = [];
/** A process of the test's own, named with a space and a parenthesis as a command may be. */
function sleeper() {
  const c = spawn('bash', ['-c', 'exec -a "a) b" sleep 30'], { stdio: 'ignore' });
  children.push(c);
  return c;
}
afterEach(() => {
  for (const c of children.splice(0)) c.kill('SIGKILL');
});
describe('the sandbox init', () => {
  it('is identified from bwrap info by pid and start time, and ended by endSandbox', async () => {
    const c = sleeper();
    const init = identifyInit(`{\n    "child-pid": ${c.pid}\n}\n`);
    expect(init?.pid).toBe(c.pid);
    expect(init?.startTime).toMatch(/^\d+$/);
    const exited = new Promise((r) => c.once('exit', r));
    expect(await endSandbox(init!)).toBe(true);
    await exited;
  });

  it('never signals a process whose start time differs (a reused pid)', async () => {
    const c = sleeper();
    expect(await endSandbox({ pid: c.pid!, startTime: '1' })).toBe(true);
    expect(isAlive(c.pid!)).toBe(true);
  });

  it('identifies nothing without a pid or for a pid that is gone', () => {
    expect(identifyInit('{}')).toBeUndefined();
    expect(identifyInit('{"child-pid": 2147483646}')).toBeUndefined();
  });
});
