import { execFileSync } from 'node:child_process';
import { link, mkdir, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { isSkillsError } from '../../src/errors.js';
import { createCappedBuffer } from '../../src/sandbox/capped-buffer.js';
import { listOutputFiles, readOutputFile } from '../../src/sandbox/read-output-file.js';
import { tempDirs } from './helpers.js';

const dirs = tempDirs();
afterAll(() => dirs.cleanup());

const refusal = async (p: Promise<unknown>) => {
  try {
    await p;
    return 'read';
  } catch (e) {
    return isSkillsError(e) ? e.code : String(e);
  }
};

describe('readOutputFile', () => {
  it('reads a regular file inside the folder', async () => {
    const out = await dirs.make();
    await mkdir(join(out, 'files'));
    await writeFile(join(out, 'files', 'a.json'), '{"ok":true}');
    const f = await readOutputFile(out, 'files/a.json', 1024);
    expect(f.content.toString()).toBe('{"ok":true}');
  });

  it('refuses symlinks, hard links, FIFOs, traversal and oversized files', async () => {
    const out = await dirs.make();
    const secret = join(await dirs.make(), 'id_canary');
    await writeFile(secret, 'SECRET');
    await symlink(secret, join(out, 'output.json'));
    await symlink(await dirs.make(), join(out, 'dirlink'));
    await writeFile(join(out, 'linked'), 'x');
    await link(join(out, 'linked'), join(out, 'linked2'));
    execFileSync('mkfifo', [join(out, 'fifo')]);
    await writeFile(join(out, 'big'), Buffer.alloc(2048));
    for (const rel of ['output.json', 'dirlink/x', 'linked', 'fifo', '../x', '/etc/passwd', 'a/./b', 'big']) {
      expect(await refusal(readOutputFile(out, rel, 1024))).toBe('PATH_INVALID');
    }
  });
});

describe('listOutputFiles', () => {
  it('lists regular files and names what it refused', async () => {
    const out = await dirs.make();
    await mkdir(join(out, 'd'));
    await writeFile(join(out, 'd', 'ok.txt'), 'x');
    await symlink('/etc/passwd', join(out, 'evil'));
    const l = await listOutputFiles(out);
    expect(l.files).toEqual(['d/ok.txt']);
    expect(l.refused).toEqual([{ path: 'evil', reason: 'symlink' }]);
  });
});

describe('createCappedBuffer', () => {
  it('keeps the cap, counts the rest, and marks the truncation', () => {
    const b = createCappedBuffer(5);
    b.push(Buffer.from('abc'));
    b.push(Buffer.from('defgh'));
    expect(b.total).toBe(8);
    expect(b.truncated).toBe(true);
    expect(b.result().toString()).toBe('abcde\n[skills-mcp: output truncated, 3 more bytes dropped]\n');
  });
});
