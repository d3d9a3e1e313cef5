import { randomBytes } from 'node:crypto';
import { chmodSync, chownSync, existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { gitSourceCase, pinned } from '../helpers/git-source-case.js';
import { tempDir } from '../helpers/temp-dir.js';

const t = tempDir();
const setup = (label: string, entry: Parameters<typeof gitSourceCase>[2]) =>
  gitSourceCase(t.dir, label, entry);
afterAll(t.cleanup);

const isRoot = process.getuid?.() === 0;

describe('pinned git sources: who may write the checkout', () => {
  const levels = [
    ['the sources folder', (s: ReturnType<typeof setup>) => join(s.dir, 'data', 'sources')],
    ['the sources/git folder', (s: ReturnType<typeof setup>) => join(s.dir, 'data', 'sources', 'git')],
    ['the checkout', (s: ReturnType<typeof setup>) => s.checkout()],
  ] as const;

  for (const [label, folder] of levels) {
    it(`refuses to serve when ${label} is group-writable, naming it and the chmod that fixes it`, () => {
      const s = setup(`gw-${label.replace(/\W+/g, '-')}`, (r) => pinned(r.url, r.first));
      expect(s.cli('list').code).toBe(0);
      const dir = folder(s);
      chmodSync(dir, 0o770);
      const r = s.cli('list');
      expect(r.code).toBe(2);
      expect(r.stderr).toContain(
        `git source ${s.url}: not served: ${dir}: is writable by its group or by others (mode 770)`,
      );
      expect(r.stderr).toContain(`\`chmod go-w ${dir}\``);
      expect(s.cli('sources', 'list').stdout).toContain(`unsafe: ${dir}: is writable`);
      chmodSync(dir, 0o700);
      expect(s.cli('list').code).toBe(0);
    });
  }

  it.runIf(isRoot)(
    'refuses to serve a checkout owned by another user, naming the folder and the chown',
    () => {
      const s = setup('owned', (r) => pinned(r.url, r.first));
      expect(s.cli('list').code).toBe(0);
      const dir = s.checkout();
      chownSync(dir, 65534, 65534);
      const r = s.cli('list');
      expect(r.code).toBe(2);
      expect(r.stderr).toContain(`${dir}: is owned by uid 65534, not by the server's user (uid 0)`);
      expect(r.stderr).toContain(`\`chown -R 0 ${dir}\``);
      const updated = s.cli('sources', 'update');
      expect(updated.code).toBe(1);
      expect(updated.stderr).toContain('is owned by uid 65534');
    },
  );

  it.runIf(isRoot)('refuses to fetch into a sources folder owned by another user', () => {
    const s = setup('owned-parent', (r) => pinned(r.url, r.first));
    const sources = join(s.dir, 'data', 'sources');
    expect(s.cli('sources', 'list').code).toBe(0);
    // The state folder made by someone else before the first start.
    expect(existsSync(sources)).toBe(false);
    mkdirSync(sources, { recursive: true, mode: 0o755 });
    chownSync(sources, 65534, 65534);
    const r = s.cli('list');
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`${sources}: is owned by uid 65534`);
    expect(existsSync(join(sources, 'git'))).toBe(false);
  });
});

describe('pinned git sources: size limits', () => {
  const big = (s: ReturnType<typeof setup>) => {
    writeFileSync(join(s.repo, 'skills', 'gitecho', 'blob.bin'), randomBytes(64 * 1024));
    s.git('add', '-A');
    s.git('commit', '--quiet', '-m', 'blob');
    return s.git('rev-parse', 'HEAD');
  };
  const noCheckout = (s: ReturnType<typeof setup>) =>
    readdirSync(join(s.dir, 'data', 'sources', 'git')).filter((n) => !n.includes('.check-'));

  it('stops a fetch over max_bytes, says so, and leaves no checkout a later start would serve', () => {
    const s = setup('bytes', (r) => pinned(r.url, r.first));
    const commit = big(s);
    s.write(`${pinned(s.url, commit)}    max_bytes: 16384\n`);
    for (let i = 0; i < 2; i++) {
      const r = s.cli('list');
      expect(r.code).toBe(2);
      expect(r.stderr).toContain(
        `git source ${s.url}: the fetch was stopped at max_bytes (16384 bytes of objects)`,
      );
      expect(noCheckout(s)).toEqual([]);
    }
    s.write(`${pinned(s.url, commit)}    max_bytes: 1048576\n`);
    expect(s.cli('list').code).toBe(0);
  });

  it('refuses a commit with more files than max_files before checking it out', () => {
    const s = setup('files', (r) => pinned(r.url, r.first));
    s.write(`${pinned(s.url, s.first)}    max_files: 1\n`);
    const r = s.cli('list');
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('the commit holds 2 files, over max_files (1): it was not checked out');
    expect(r.stderr).toContain('raise max_bytes / max_files');
    expect(noCheckout(s)).toEqual([]);
  });
});
