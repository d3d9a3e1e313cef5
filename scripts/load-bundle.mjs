// Runs the bundled CLI (dist/cli.cjs and its chunks) through V8's code cache. Copied to dist/load-bundle.mjs by
// scripts/bundle.mjs; dist/cli.js calls loadBundle().
//
// Most of a start-up used to be V8 compiling ~1.3 MB of JavaScript (the MCP SDK, zod, pino and the server) and then
// compiling again each function the first time it ran. The build runs the server once and saves, next to each file it
// loaded, the bytecode V8 made for it (`<file>.cache`); a later start hands that back to V8 instead of compiling.
// V8 checks each cache against the source, its own version and its flags and ignores a cache that does not match
// (another Node version, a rebuilt file): the code then compiles as usual, only slower. The caches are written by
// the build into the package's own folder and never at run time.
//
// Each file is evaluated as a CommonJS module, like Node's loader does: relative requires between bundle files go
// through this loader (and its cache), every other one (node: built-ins, native addons, packages left outside the
// bundle) through Node's require.
import { readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Script } from 'node:vm';

/**
 * Worker-thread environment data (node:worker_threads) set by the build's warm-up run: threads it starts (the audit
 * writer, dist/audit-worker.js) save their code caches too.
 */
export const WRITE_CACHE_KEY = 'skills-mcp:write-code-cache';

/**
 * The name the build compiles each bundle file under when it writes the caches: `<BUILD_ORIGIN><path in dist>`.
 * V8 keeps the script's name in its code cache and a script compiled from the cache keeps that name, whatever the
 * filename it is compiled with now: stack traces would name the build machine's folder. Compiled under this name
 * instead, a frame reads `skills-mcp-build:/dist/chunks/…`, which `rewriteStackPaths` turns into the installed path.
 */
export const BUILD_ORIGIN = 'skills-mcp-build:/dist/';

/**
 * Loads a bundle entry: dist/cli.cjs, or dist/audit-worker.cjs in the audit writer's thread. With `writeCache`,
 * saves the code cache of every bundle file it loaded when the process (or thread) exits (the build's warm-up run);
 * otherwise reads them.
 */
export function loadBundle({ entry = 'cli.cjs', writeCache = false } = {}) {
  const dist = dirname(fileURLToPath(import.meta.url));
  const nodeRequire = createRequire(import.meta.url);
  if (writeCache) nodeRequire('node:worker_threads').setEnvironmentData(WRITE_CACHE_KEY, true);
  const modules = new Map();
  const scripts = [];
  let cached = false;
  const load = (file) => {
    const loaded = modules.get(file);
    if (loaded !== undefined) return loaded.exports;
    const module = { exports: {} };
    modules.set(file, module);
    const script = writeCache
      ? compileBundleFile(file, undefined, BUILD_ORIGIN + relative(dist, file).split(sep).join('/'))
      : compileBundleFile(file, readCache(file));
    if (writeCache) scripts.push({ file, script });
    else if (!cached && script.cachedDataRejected === false) {
      cached = true;
      rewriteStackPaths(BUILD_ORIGIN, `${dist}${sep}`);
    }
    const dir = dirname(file);
    const require = (id) => (id.startsWith('.') ? load(join(dir, id)) : nodeRequire(id));
    script.runInThisContext().call(module.exports, module.exports, require, module, file, dir);
    return module.exports;
  };
  if (writeCache) {
    process.once('exit', () => {
      for (const { file, script } of scripts) writeFileSync(`${file}.cache`, script.createCachedData());
    });
  }
  return load(join(dist, entry));
}

/**
 * Compiles one bundle file as a CommonJS module wrapper, with its code cache when given one. `name` is the script's
 * name in stack traces (the file's path unless given).
 */
export function compileBundleFile(file, cachedData, name = file) {
  // A bundle file is ESM turned into CommonJS: strict, like the module it came from.
  const source = readFileSync(file, 'utf8').replace(/^#!/, '//');
  const wrapped = `(function (exports, require, module, __filename, __dirname) {'use strict';${source}\n})`;
  return new Script(wrapped, { filename: name, cachedData });
}

/**
 * Stack frames naming `from…` name `to…` instead (the frames only: an error's message is left as it is). Formats as
 * V8 does (`<error>\n    at <frame>` …), or through an `Error.prepareStackTrace` set before.
 */
export function rewriteStackPaths(from, to) {
  const before = Error.prepareStackTrace;
  Error.prepareStackTrace = (error, frames) => {
    if (before !== undefined) {
      const stack = before(error, frames);
      return typeof stack === 'string' ? stack.split(from).join(to) : stack;
    }
    let head;
    try {
      head = Error.prototype.toString.call(error);
    } catch {
      head = '<error>';
    }
    return head + frames.map((f) => `\n    at ${String(f).split(from).join(to)}`).join('');
  };
}

/** The code cache the build wrote next to a bundle file, if any. */
export function readCache(file) {
  try {
    return readFileSync(`${file}.cache`);
  } catch {
    return undefined;
  }
}
