import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Sandbox } from '../../src/sandbox/create-sandbox.js';
import {
  isAlive,
  isBelow,
  isLinux,
  isRoot,
  newSandbox,
  pidsRunning,
  plan,
  processes,
  tempDirs,
} from './helpers.js';
import { waitFor } from '../helpers/wait-for.js';

const dirs = tempDirs();
const unhandled: unknown[] = [];
process.on('unhandledRejection', (e) => unhandled.push(e));
let sb: Sandbox;
beforeAll(() => {
  sb = newSandbox();
});
afterAll(async () => {
  await sb.dispose();
  await dirs.cleanup();
});

/** Writes a canary (its first argument), then sleeps (its second). */
const SCRIPT = 'import sys, time; open(sys.argv[1], "w").write("ran"); time.sleep(float(sys.argv[2]))';

async function outDir(staged: boolean) {
  const parent = await dirs.make('skills-mcp-ready-', staged ? 0o700 : 0o755);
  const inner = join(parent, 'runs');
  mkdirSync(inner, { mode: 0o755 });
  return sb.createOutputDir(inner);
}

describe.skipIf(!isLinux)('RunOptions.ready rejected before the adapter awaits it', () => {
  it('is not an unhandled rejection (Node 20 exits on one by default)', async () => {
    const fresh = newSandbox();
    try {
      const out = await outDir(false);
      const canary = join(out, 'canary');
      // Rejects while the adapter still probes bwrap / takes a launcher, before `await opts.ready`.
      const ready = sleep(20).then(() => {
        throw new Error('refused while preparing');
      });
      const r = fresh.run(plan({ argv: ['python3', '-c', SCRIPT, canary, '0'], writablePaths: [out] }), {
        ready,
      });
      await expect(r).rejects.toThrow('refused while preparing');
      await sleep(200);
      expect(existsSync(canary)).toBe(false);
      expect(unhandled.map(String)).toEqual([]);
    } finally {
      await fresh.dispose();
    }
  }, 30_000);
});

describe.skipIf(!isLinux).each([false, true])('RunOptions.ready (staged: %s)', (staged) => {
  it('runs nothing when ready rejects later', async () => {
    for (let i = 0; i < 3; i++) {
      const out = await outDir(staged);
      const canary = join(out, 'canary');
      const secs = `7.${Math.floor(Math.random() * 1e6)}`;
      const ready = sleep(150).then(() => {
        throw new Error('refused');
      });
      ready.catch(() => undefined); // (the unhandled case is the test above)
      const r = sb.run(plan({ argv: ['python3', '-c', SCRIPT, canary, secs], writablePaths: [out] }), {
        ready,
      });
      await expect(r).rejects.toThrow('refused');
      await sleep(400);
      expect(existsSync(canary)).toBe(false);
      expect(pidsRunning(['python3', '-c', SCRIPT, canary, secs])).toEqual([]);
    }
  }, 30_000);

  it('runs nothing when ready was rejected already', async () => {
    const out = await outDir(staged);
    const canary = join(out, 'canary');
    const ready = Promise.reject(new Error('refused early'));
    ready.catch(() => undefined);
    await expect(
      sb.run(plan({ argv: ['python3', '-c', SCRIPT, canary, '0'], writablePaths: [out] }), { ready }),
    ).rejects.toThrow('refused early');
    await sleep(300);
    expect(existsSync(canary)).toBe(false);
  }, 30_000);

  it('starts only after ready resolves', async () => {
    const out = await outDir(staged);
    const canary = join(out, 'canary');
    let at = 0;
    const ready = sleep(600).then(() => {
      at = Date.now();
    });
    const r = await sb.run(plan({ argv: ['python3', '-c', SCRIPT, canary, '0'], writablePaths: [out] }), {
      ready,
    });
    expect(r.exitCode, r.stderr.toString()).toBe(0);
    expect(statSync(canary).mtimeMs).toBeGreaterThanOrEqual(at - 5);
  }, 30_000);

  it('runs nothing when the call is cancelled while it waits for the go', async () => {
    const out = await outDir(staged);
    const canary = join(out, 'canary');
    const ac = new AbortController();
    const ready = sleep(400);
    setTimeout(() => ac.abort(), 100);
    const r = await sb.run(plan({ argv: ['python3', '-c', SCRIPT, canary, '0'], writablePaths: [out] }), {
      ready,
      signal: ac.signal,
    });
    await sleep(300);
    expect(r.cancelled).toBe(true);
    expect(existsSync(canary)).toBe(false);
  }, 30_000);
});

// The launcher gets its run while the call's start is being recorded and waits for a start byte before anything of
// the chain starts: when the server dies instead (its end of the pipe closes), the launcher ends and nothing runs.
// `warm`: a first run in the same folder, so the held run gets a launcher made ready for it (as root, for a folder
// only root can reach, a pre-staged one, which forks its waiter before the start byte).
describe.skipIf(!isLinux).each([
  { staged: false, warm: false },
  { staged: false, warm: true },
  { staged: true, warm: false },
  { staged: true, warm: true },
])('a launcher holding a run without its start byte (staged: $staged, warm: $warm)', ({ staged, warm }) => {
  it('ends with the server, and the script never starts', async () => {
    const out = await outDir(staged);
    const canary = join(out, 'canary');
    const secs = `9.${Math.floor(Math.random() * 1e6)}`;
    const dist = fileURLToPath(new URL('../../dist', import.meta.url));
    const holder = spawn(
      process.execPath,
      [
        fileURLToPath(new URL('hold-run.mjs', import.meta.url)),
        dist,
        JSON.stringify(plan({ argv: ['python3', '-c', SCRIPT, canary, secs], writablePaths: [out] })),
        ...(warm ? ['warm'] : []),
      ],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    try {
      await new Promise<void>((resolve, reject) => {
        holder.stdout.on('data', (d: Buffer) => d.toString().includes('held') && resolve());
        holder.once('exit', (code) => reject(new Error(`the holder exited (${code}) before it held a run`)));
      });
      const below = processes()
        .filter((p) => isBelow(p.pid, [holder.pid!]))
        .map((p) => p.pid);
      expect(below.length).toBeGreaterThan(0);
      // A pre-staged root launcher has forked the process that waits for the byte: two launcher shells.
      if (staged && warm && isRoot) {
        const launchers = processes().filter(
          (p) => below.includes(p.pid) && p.argv.includes('skills-mcp-launcher'),
        );
        expect(launchers.length).toBeGreaterThanOrEqual(2);
      }
      holder.kill('SIGKILL');
      await waitFor(() => !below.some(isAlive), 3_000, 'the sandbox processes to end').catch(() => undefined);
      expect(below.filter(isAlive)).toEqual([]);
      await sleep(300);
      expect(existsSync(canary)).toBe(false);
      expect(pidsRunning(['python3', '-c', SCRIPT, canary, secs])).toEqual([]);
    } finally {
      holder.kill('SIGKILL');
    }
  }, 30_000);
});

describe.skipIf(!isLinux)('the wall-time limit and the duration of a run', () => {
  it('count from the go, not from the wait for it', async () => {
    const out = await outDir(false);
    const canary = join(out, 'canary');
    const r = await sb.run(
      plan({
        argv: ['python3', '-c', SCRIPT, canary, '0'],
        writablePaths: [out],
        limits: { wallTimeMs: 2_000 },
      }),
      { ready: sleep(2_500) },
    );
    expect(r.timedOut, r.stderr.toString()).toBe(false);
    expect(r.exitCode).toBe(0);
    expect(r.durationMs).toBeLessThan(2_000);
    expect(existsSync(canary)).toBe(true);
  }, 30_000);
});
