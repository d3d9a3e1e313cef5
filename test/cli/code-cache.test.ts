import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { repoRoot } from '../helpers/temp-dir.js';

const dist = join(repoRoot, 'dist');

/** Compiles each bundle file the way dist/cli.js does, in a fresh Node, and says which caches V8 refused. */
function refusedCaches(files: string[]): { refused: string[]; missing: string[] } {
  const code = `
    import { existsSync } from 'node:fs';
    import { compileBundleFile, readCache } from ${JSON.stringify(join(dist, 'load-bundle.mjs'))};
    const files = ${JSON.stringify(files)};
    const missing = files.filter((f) => !existsSync(f + '.cache'));
    const refused = files.filter((f) => existsSync(f + '.cache') && compileBundleFile(f, readCache(f)).cachedDataRejected);
    process.stdout.write(JSON.stringify({ refused, missing }));
  `;
  const r = spawnSync(process.execPath, ['--input-type=module', '-e', code], { encoding: 'utf8' });
  expect(r.stderr).toBe('');
  return JSON.parse(r.stdout) as { refused: string[]; missing: string[] };
}

describe('the bundled CLI', () => {
  it('starts from a code cache that V8 accepts for every bundle file the build cached', () => {
    // The build caches what a stdio start and a read-only call load: the entry, the schemas and the audit store (which
    // the audit log's writer thread loads, from its own entry).
    const chunks = readdirSync(join(dist, 'chunks'))
      .filter((f) => f.endsWith('.cjs') && existsSync(join(dist, 'chunks', `${f}.cache`)))
      .map((f) => join(dist, 'chunks', f));
    expect(chunks.some((f) => /\/schemas-[^/]*\.cjs$/.test(f))).toBe(true);
    expect(chunks.some((f) => /\/open-audit-store-[^/]*\.cjs$/.test(f))).toBe(true);
    expect(refusedCaches([join(dist, 'cli.cjs'), join(dist, 'audit-worker.cjs'), ...chunks])).toEqual({
      refused: [],
      missing: [],
    });
  });
});
