// Bundles the compiled CLI (dist/cli.js, from tsc) in place: one entry file plus chunks for what loads lazily
// (the gated-run pipeline, the audit store, the sandbox, HTTP, the other commands). Serving over stdio then loads
// 8 files instead of 223 modules. Run by `npm run build` after tsc. It writes nothing to stdout, since `npm start`
// serves MCP on stdout right after it. The rest of dist/ stays for the benches and scripts.
import { readFileSync, rmSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { build } from 'rolldown';

const dist = fileURLToPath(new URL('../dist/', import.meta.url));
if (readFileSync(`${dist}cli.js`, 'utf8').includes('./chunks/')) {
  throw new Error('dist/cli.js is already bundled: run `npm run build`, which compiles it afresh first');
}
rmSync(`${dist}chunks`, { recursive: true, force: true });
await build({
  input: `${dist}cli.js`,
  platform: 'node',
  // A native addon, and the YAML parsers skills-mcp requires only for unusual frontmatter.
  external: ['better-sqlite3', 'gray-matter', 'yaml'],
  // A warning is a failed build: e.g. a lazily imported module also imported statically would load at start-up.
  onwarn(warning) {
    throw new Error(`bundle: ${warning.message}`);
  },
  output: {
    dir: dist,
    format: 'esm',
    entryFileNames: 'cli.js',
    chunkFileNames: 'chunks/[name]-[hash].js',
  },
});
