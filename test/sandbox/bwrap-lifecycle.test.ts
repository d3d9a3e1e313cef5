import { spawn as nodeSpawn } from 'node:child_process';
import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isSkillsError } from '../../src/errors.js';
import { silentLogger } from '../../src/log.js';
import type { Sandbox } from '../../src/sandbox/create-sandbox.js';
import type { SpawnFn } from '../../src/sandbox/run-child.js';
import { createSeatbeltAdapter } from '../../src/sandbox/seatbelt-adapter.js';
import { defaultProfilesDir } from '../../src/sandbox/load-profile.js';
import { newSandbox, plan, tempDirs, text } from './helpers.js';

const dirs = tempDirs();
let sb: Sandbox;
beforeAll(() => {
  sb = newSandbox();
});
afterAll(async () => {
  await sb.dispose();
  await dirs.cleanup();
});

/** A script that double-forks a setsid daemon appending to `beat` every 50 ms, then hangs or exits. */
const DAEMON = [
  'import os, sys, time',
  'beat, mode = sys.argv[1], sys.argv[2]',
  'if os.fork() == 0:',
  '    os.setsid()',
  '    if os.fork() == 0:',
  '        while True:',
  '            with open(beat, "a") as f: f.write(".")',
  '            time.sleep(0.05)',
  '    os._exit(0)',
  'time.sleep(0.3)',
  'print("started", flush=True)',
  'if mode == "hang":',
  '    time.sleep(3600)',
].join('\n');

async function size(p: string): Promise<number> {
  return (await stat(p).catch(() => ({ size: -1 }))).size;
}

/** True when the file stopped growing (checked over a generous interval; no timing assertion). */
async function stoppedGrowing(p: string): Promise<boolean> {
  const a = await size(p);
  await sleep(600);
  return a > 0 && (await size(p)) === a;
}

const codeOf = async (p: Promise<unknown>) => {
  try {
    await p;
    return 'ok';
  } catch (e) {
    return isSkillsError(e) ? e.code : String(e);
  }
};

describe('bwrap adapter: ending runs', () => {
  it('kills the whole tree, including a double-forked daemon, when the wall-clock limit passes', async () => {
    const out = await sb.createOutputDir(await dirs.make('skills-mcp-runs-'));
    const beat = join(out, 'beat');
    const r = await sb.run(
      plan({
        argv: ['python3', '-c', DAEMON, beat, 'hang'],
        writablePaths: [out],
        limits: { wallTimeMs: 1500 },
      }),
    );
    expect(r.timedOut).toBe(true);
    expect(r.signal).toBe('SIGKILL');
    expect(text(r.stdout)).toBe('started\n'); // partial output is kept
    expect(await stoppedGrowing(beat)).toBe(true);
  });

  it('reclaims a daemon left behind by a script that exits normally', async () => {
    const out = await sb.createOutputDir(await dirs.make('skills-mcp-runs-'));
    const beat = join(out, 'beat');
    const r = await sb.run(plan({ argv: ['python3', '-c', DAEMON, beat, 'exit'], writablePaths: [out] }));
    expect(r.exitCode).toBe(0);
    expect(r.timedOut).toBe(false);
    expect(await stoppedGrowing(beat)).toBe(true);
  });

  it('cancels through an AbortSignal and kills the tree', async () => {
    const out = await sb.createOutputDir(await dirs.make('skills-mcp-runs-'));
    const beat = join(out, 'beat');
    const ac = new AbortController();
    const r = await sb.run(plan({ argv: ['python3', '-c', DAEMON, beat, 'hang'], writablePaths: [out] }), {
      signal: ac.signal,
      onOutput: (c) => {
        if (c.stream === 'stdout') ac.abort();
      },
    });
    expect(r.cancelled).toBe(true);
    expect(r.timedOut).toBe(false);
    expect(await stoppedGrowing(beat)).toBe(true);
  });

  it('truncates a 200 MB flood at the cap while the server keeps its memory bounded', async () => {
    const before = process.memoryUsage().arrayBuffers;
    let peak = before;
    let seen = 0;
    const r = await sb.run(
      plan({
        argv: [
          'python3',
          '-c',
          'import sys\nb = b"x" * 1048576\nfor _ in range(200): sys.stdout.buffer.write(b)',
        ],
        limits: { maxOutputBytes: 65_536 },
      }),
      {
        onOutput: (c) => {
          seen += c.bytes;
          peak = Math.max(peak, process.memoryUsage().arrayBuffers);
        },
      },
    );
    expect(r.exitCode).toBe(0);
    expect(r.truncated.stdout).toBe(true);
    expect(r.bytes.stdout).toBe(200 * 1048576);
    expect(seen).toBe(200 * 1048576);
    expect(r.stdout.length).toBeLessThan(65_536 + 200);
    expect(text(r.stdout)).toMatch(/\[skills-mcp: output truncated, 209649664 more bytes dropped\]\n$/);
    // Keeping the flood would hold ≥ 200 MB; what remains is chunks awaiting GC.
    expect(peak - before).toBeLessThan(100 * 1048576);
  });
});

describe('bwrap adapter: no silent fallback', () => {
  it('denies with SANDBOX_DENIED when bwrap is missing, and spawns nothing', async () => {
    let spawned = 0;
    const spawn = ((...a: Parameters<SpawnFn>) => {
      spawned++;
      return nodeSpawn(...a);
    }) as SpawnFn;
    const missing = newSandbox({ bwrapCandidates: ['/nonexistent/bwrap'], spawn });
    try {
      const err = await missing.run(plan({ argv: ['/bin/true'] })).catch((e: unknown) => e);
      expect(isSkillsError(err) && err.code).toBe('SANDBOX_DENIED');
      expect((err as Error).message).toMatch(/bubblewrap \(bwrap\) was not found/);
      expect(spawned).toBe(0);
      expect((await missing.probe()).diagnosis.hint).toMatch(/apt-get install bubblewrap/);
    } finally {
      await missing.dispose();
    }
  });

  it('caches a healthy probe and re-runs a failed one', async () => {
    let t = 0;
    const clock = () => new Date(Date.UTC(2026, 0, 1, 0, 0, t++));
    const good = newSandbox({ clock });
    const bad = newSandbox({ clock, bwrapCandidates: ['relative/bwrap'] });
    try {
      expect((await good.probe()).checkedAt).toBe((await good.probe()).checkedAt);
      const first = await bad.probe();
      expect(first.healthy).toBe(false);
      expect((await bad.probe()).checkedAt).not.toBe(first.checkedAt);
    } finally {
      await good.dispose();
      await bad.dispose();
    }
  });

  it('reports seatbelt as unavailable off macOS', async () => {
    const a = createSeatbeltAdapter({
      log: silentLogger(),
      env: process.env,
      profilesDir: defaultProfilesDir(),
    });
    expect(await codeOf(a.run(plan({ argv: ['/bin/true'] })))).toBe('SANDBOX_DENIED');
  });

  it('turns the sandbox off only by operator config, and says so in the evidence', async () => {
    expect(await codeOf(sb.run({ ...plan({ argv: ['/bin/true'] }), sandbox: 'off' }))).toBe('SANDBOX_DENIED');
    const off = newSandbox({ mode: 'off' });
    const r = await off.run(plan({ argv: ['bash', '-c', 'echo unconfined'] }));
    expect(text(r.stdout)).toBe('unconfined\n');
    expect(r.evidence).toMatchObject({ requested: 'off', effective: 'none', adapter: 'off', active: false });
  });

  it.each([
    ['a NUL in argv', { argv: ['python3', 'a\0b'] }],
    ['a relative mount', { argv: ['/bin/true'], readOnlyPaths: ['skills/x'] }],
    ['a host root mount', { argv: ['/bin/true'], readOnlyPaths: ['/'] }],
    ['/proc', { argv: ['/bin/true'], readOnlyPaths: ['/proc/1'] }],
    ['a writable /usr path', { argv: ['/bin/true'], writablePaths: ['/usr/lib'] }],
    ['an env name with =', { argv: ['/bin/true'], env: { 'A=B': 'x' } }],
  ])('rejects a plan with %s before spawning', async (_what, p) => {
    expect(await codeOf(sb.run(plan(p)))).toBe('SANDBOX_FAILED');
  });
});

describe('bwrap adapter: evidence', () => {
  it('labels memory and pids by the layer the probe found', async () => {
    const probe = await sb.probe();
    const r = await sb.run(plan({ argv: ['/bin/true'], profile: 'strict' }));
    expect(r.evidence.limits).toEqual({
      wall: 20_000,
      cpu: 10,
      memory: probe.limits.cgroup === 'none' ? 'rlimit-best-effort' : 'cgroup',
      pids: probe.limits.cgroup === 'none' ? 'rlimit' : 'cgroup',
    });
    expect(r.evidence.profile).toBe('strict');
  });
});
