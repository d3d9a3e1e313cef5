import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { repoRoot, tempDir } from '../helpers/temp-dir.js';

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

  it('names the installed files in stack traces, not the folder the build wrote the caches in', () => {
    const t = tempDir();
    try {
      // A bundle built (and its caches written) in one folder, then installed in another: the real loader.
      const built = join(t.dir, 'build', 'dist');
      mkdirSync(join(built, 'chunks'), { recursive: true });
      cpSync(join(dist, 'load-bundle.mjs'), join(built, 'load-bundle.mjs'));
      writeFileSync(join(built, 'cli.cjs'), "module.exports = require('./chunks/deep.cjs');\n");
      writeFileSync(
        join(built, 'chunks', 'deep.cjs'),
        'exports.boom = function boom() {\n  throw new Error("boom");\n};\n',
      );
      const run = (folder: string, code: string) => {
        const r = spawnSync(process.execPath, ['--input-type=module', '-e', code], {
          cwd: folder,
          encoding: 'utf8',
        });
        expect(r.stderr).toBe('');
        return r.stdout;
      };
      const loader = (folder: string) => JSON.stringify(join(folder, 'load-bundle.mjs'));
      run(
        built,
        `import { loadBundle } from ${loader(built)}; loadBundle({ writeCache: true }).boom.length;`,
      );
      expect(existsSync(join(built, 'chunks', 'deep.cjs.cache'))).toBe(true);

      const installed = join(t.dir, 'usr', 'lib', 'node_modules', 'skills-mcp', 'dist');
      cpSync(built, installed, { recursive: true });
      const out = run(
        installed,
        `import { compileBundleFile, loadBundle, readCache } from ${loader(installed)};
         const f = ${JSON.stringify(join(installed, 'chunks', 'deep.cjs'))};
         const accepted = !compileBundleFile(f, readCache(f)).cachedDataRejected;
         try { loadBundle().boom(); } catch (e) { process.stdout.write(JSON.stringify({ accepted, stack: e.stack })); }`,
      );
      const { accepted, stack } = JSON.parse(out) as { accepted: boolean; stack: string };
      // Only meaningful when V8 took the cache (which holds the name the script was compiled under).
      expect(accepted).toBe(true);
      expect(stack.split('\n').slice(0, 2)).toEqual([
        'Error: boom',
        `    at Object.boom (${join(installed, 'chunks', 'deep.cjs')}:2:9)`,
      ]);
      expect(stack).not.toContain(built);
      expect(stack).not.toContain('skills-mcp-build:');
    } finally {
      t.cleanup();
    }
  });
});
