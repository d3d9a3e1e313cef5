import { spawn } from 'node:child_process';
import { chmod, mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { isReachableBy, stageBinds, stagerArgs } from '../../src/sandbox/stage-mounts.js';
import { watchRss } from '../../src/sandbox/watch-rss.js';
import { tempDirs } from './helpers.js';

const dirs = tempDirs();
afterAll(() => dirs.cleanup());

describe('isReachableBy', () => {
  it('needs search permission on every parent and read permission on the target', async () => {
    const root = await dirs.make('skills-mcp-reach-', 0o755);
    await mkdir(join(root, 'open', 'x'), { recursive: true });
    await mkdir(join(root, 'closed', 'x'), { recursive: true });
    await chmod(join(root, 'closed'), 0o700);
    await writeFile(join(root, 'open', 'secret'), 'x', { mode: 0o600 });
    const other = { uid: 65534, gid: 65534 };
    expect(isReachableBy(join(root, 'open', 'x'), other.uid, other.gid)).toBe(true);
    expect(isReachableBy(join(root, 'closed', 'x'), other.uid, other.gid)).toBe(false);
    expect(isReachableBy(join(root, 'open', 'secret'), other.uid, other.gid)).toBe(false);
    const me = process.getuid!();
    expect(isReachableBy(join(root, 'closed', 'x'), me, process.getgid!())).toBe(true);
    expect(isReachableBy(join(root, 'missing'), me, process.getgid!())).toBe(false);
  });
});

describe('stageBinds', () => {
  it('rewrites only the unreachable sources to numbered paths under the stage folder', () => {
    const binds = [
      { src: '/root/.pyenv/versions/3.11.7', dest: '/root/.pyenv/versions/3.11.7', write: false },
      { src: '/tmp/out', dest: '/tmp/out', write: true },
      { src: '/root/ws', dest: '/work', write: true },
    ];
    const s = stageBinds(binds, new Set(['/root/.pyenv/versions/3.11.7', '/root/ws']), '/tmp/st');
    expect(s.inner.map((b) => b.src)).toEqual(['/tmp/st/0', '/tmp/out', '/tmp/st/1']);
    expect(s.inner.map((b) => b.dest)).toEqual(binds.map((b) => b.dest));
    expect(stagerArgs('/tmp/st', s.outer).slice(-7)).toEqual([
      '--ro-bind',
      '/root/.pyenv/versions/3.11.7',
      '/tmp/st/0',
      '--bind',
      '/root/ws',
      '/tmp/st/1',
      '--die-with-parent',
    ]);
  });
});

describe('watchRss', () => {
  it('calls back when a process group grows past the limit', async () => {
    const child = spawn(
      process.execPath,
      ['-e', 'const a = []; setInterval(() => a.push(Buffer.alloc(8 << 20, 1)), 20)'],
      {
        detached: true,
        stdio: 'ignore',
      },
    );
    let fired = false;
    const w = watchRss(96 * 1024, 50, () => {
      fired = true;
      process.kill(-child.pid!, 'SIGKILL');
    });
    w.start(child.pid!);
    await new Promise((r) => child.on('exit', r));
    w.stop();
    expect(fired).toBe(true);
    expect(w.exceeded()).toBe(true);
  });
});
