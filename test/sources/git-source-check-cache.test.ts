import { chmodSync, renameSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { checkGitSource, createCheckCache } from '../../src/skills/check-git-source.js';
import { fetchGitSource } from '../../src/skills/fetch-git-source.js';
import { checkoutDir } from '../../src/skills/git-checkout.js';
import { makeRepo } from '../helpers/git-source-case.js';
import { tempDir } from '../helpers/temp-dir.js';

const t = tempDir();
afterAll(t.cleanup);

const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: t.dir };
/** An environment in which no git can be found: a check that still passes ran none. */
const noGit = { PATH: '/nonexistent', HOME: t.dir };
/** A clock ten seconds ahead, so the files just checked out count as settled. */
const later = () => (BigInt(Date.now()) + 10_000n) * 1_000_000n;

function fetched(label: string) {
  const r = makeRepo(join(t.dir, label));
  const first = r.commit('Echoes from a pinned git commit. Use in tests.');
  const source = {
    git: r.url,
    ref: first,
    path: 'skills',
    allow_moving_ref: false,
    max_bytes: 1 << 20,
    max_files: 100,
  };
  const checkout = checkoutDir(join(t.dir, label, 'state', 'sources'), source.git);
  fetchGitSource(source, checkout, env);
  return { source, checkout, main: join(checkout, 'skills', 'gitecho', 'scripts', 'main.py') };
}

describe('the per-call check of a git checkout', () => {
  it('runs no git for a checkout unchanged since a check that passed', () => {
    const { source, checkout } = fetched('unchanged');
    const cache = createCheckCache(later);
    expect(checkGitSource(source, checkout, env, cache).state).toBe('ok');
    expect(checkGitSource(source, checkout, noGit, cache).state).toBe('ok');
  });

  it('hashes again files changed within two seconds of the check, not taking their lstat on trust', () => {
    const { source, checkout } = fetched('fresh');
    const cache = createCheckCache();
    expect(checkGitSource(source, checkout, env, cache).state).toBe('ok');
    expect(checkGitSource(source, checkout, noGit, cache).state).toBe('changed');
  });

  const edits: [string, (c: ReturnType<typeof fetched>) => void][] = [
    [
      'a same-size rewrite with its mtime set back',
      ({ main }) => {
        const was = statSync(main);
        writeFileSync(main, 'x'.repeat(was.size));
        utimesSync(main, was.atime, was.mtime);
      },
    ],
    ['a mode change', ({ main }) => chmodSync(main, 0o755)],
    [
      'a file put in place of another',
      ({ main }) => {
        writeFileSync(`${main}.new`, 'print("swapped")\n');
        renameSync(`${main}.new`, main);
      },
    ],
    ['a file added', ({ checkout }) => writeFileSync(join(checkout, 'skills', 'extra.py'), 'print(1)\n')],
    [
      "a rewrite of the checkout's HEAD",
      ({ checkout }) => writeFileSync(join(checkout, '.git', 'HEAD'), '0'.repeat(40) + '\n'),
    ],
  ];
  for (const [what, edit] of edits) {
    it(`refuses ${what} after a check that passed`, () => {
      const c = fetched(what.replace(/\W+/g, '-'));
      const cache = createCheckCache(later);
      expect(checkGitSource(c.source, c.checkout, env, cache).state).toBe('ok');
      edit(c);
      expect(checkGitSource(c.source, c.checkout, env, cache).state).toBe('changed');
      // Not taken from the cache on the next call either.
      expect(checkGitSource(c.source, c.checkout, env, cache).state).toBe('changed');
    });
  }
});
