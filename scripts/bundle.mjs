// Bundles the compiled CLI (dist/cli.js, from tsc) in place: dist/cli.cjs plus chunks for what loads lazily (the
// gated-run pipeline, the audit store, the sandbox, HTTP, the other commands), as CommonJS so that dist/cli.js can
// run them through V8's code cache (load-bundle.mjs), which the build then writes by serving once
// (write-code-cache.mjs). Serving over stdio then reads 7 files of code (and their caches) instead of 223 modules and
// compiles little.
// Run by `npm run build` after tsc. It writes nothing to stdout, since `npm start` serves MCP on stdout right after
// it. The rest of dist/ stays for the benches and scripts.
import { copyFileSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { build } from 'rolldown';
import { writeCodeCache } from './write-code-cache.mjs';

const dist = fileURLToPath(new URL('../dist/', import.meta.url));
const LAUNCHER = `#!/usr/bin/env node
import { loadBundle } from './load-bundle.mjs';

loadBundle();
`;
// The audit log's writer thread (see src/audit/open-audit-worker.ts) starts from this file.
const WORKER_LAUNCHER = `import { getEnvironmentData } from 'node:worker_threads';
import { WRITE_CACHE_KEY, loadBundle } from './load-bundle.mjs';

loadBundle({ entry: 'audit-worker.cjs', writeCache: getEnvironmentData(WRITE_CACHE_KEY) === true });
`;
if (readFileSync(`${dist}cli.js`, 'utf8') === LAUNCHER) {
  throw new Error('dist/cli.js is already bundled: run `npm run build`, which compiles it afresh first');
}
rmSync(`${dist}chunks`, { recursive: true, force: true });
rmSync(`${dist}cli.cjs.cache`, { force: true });
rmSync(`${dist}audit-worker.cjs.cache`, { force: true });
await build({
  input: { cli: `${dist}cli.js`, 'audit-worker': `${dist}audit-worker.js` },
  platform: 'node',
  // A native addon, and the YAML parsers skills-mcp requires only for unusual frontmatter.
  external: ['better-sqlite3', 'gray-matter', 'yaml'],
  // A warning is a failed build: e.g. a lazily imported module also imported statically would load at start-up.
  onwarn(warning) {
    throw new Error(`bundle: ${warning.message}`);
  },
  output: {
    dir: dist,
    format: 'cjs',
    entryFileNames: '[name].cjs',
    chunkFileNames: 'chunks/[name]-[hash].cjs',
    // zod in a chunk of its own, as it was before the audit writer's thread became a second entry.
    codeSplitting: { groups: [{ name: 'schemas', test: /node_modules[\\/]zod[\\/]/ }] },
    // A lazy chunk is required when first needed, so it goes through the same loader and code cache.
    dynamicImportInCjs: false,
  },
});
copyFileSync(fileURLToPath(new URL('load-bundle.mjs', import.meta.url)), `${dist}load-bundle.mjs`);
writeFileSync(`${dist}cli.js`, LAUNCHER, { mode: 0o755 });
writeFileSync(`${dist}audit-worker.js`, WORKER_LAUNCHER);
// Without a cache the CLI works the same, it only compiles at each start: a failed warm-up does not fail the build.
await writeCodeCache(dist, fileURLToPath(new URL('../skills', import.meta.url))).catch((err) => {
  process.stderr.write(`bundle: no code cache written, start-up will be slower: ${err.message}\n`);
});
