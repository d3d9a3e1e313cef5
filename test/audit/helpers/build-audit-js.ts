import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

const root = fileURLToPath(new URL('../../..', import.meta.url));
const IMPORT = /\bfrom\s+'(\.{1,2}\/[^']+)\.js'/g;

/**
 * Child processes cannot import TypeScript on Node 20, and dist/ may be stale or mid-build by others: transpile
 * `src/audit/index.ts` (or another `module` under src/) and every local module it imports into a folder under the repo (so `node_modules`
 * resolves), for writer processes to import. Returns the built `audit/index.js` and a cleanup function.
 */
export function buildAuditJs(module = 'audit/index'): { entry: string; cleanup: () => void } {
  const src = join(root, 'src');
  const out = join(root, '.vitest-tmp', `audit-js-${process.pid}-${Date.now()}`);
  const pending = [join(src, `${module}.ts`)];
  const done = new Set<string>();
  while (pending.length > 0) {
    const file = pending.pop()!;
    if (done.has(file)) continue;
    done.add(file);
    const { outputText } = ts.transpileModule(readFileSync(file, 'utf8'), {
      fileName: file,
      compilerOptions: {
        module: ts.ModuleKind.ESNext,
        target: ts.ScriptTarget.ES2022,
        verbatimModuleSyntax: true,
      },
    });
    for (const m of outputText.matchAll(IMPORT)) pending.push(resolve(dirname(file), `${m[1]}.ts`));
    const target = join(out, relative(src, file)).replace(/\.ts$/, '.js');
    mkdirSync(dirname(target), { recursive: true });
    writeFileSync(target, outputText);
  }
  return {
    entry: join(out, `${module}.js`),
    cleanup: () => rmSync(out, { recursive: true, force: true }),
  };
}
