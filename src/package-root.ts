import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

let root: string | undefined;

/**
 * The package root folder (holds package.json, skills/, sandbox-profiles/): the nearest folder above this module
 * with skills-mcp's package.json. Found by walking up, so it holds from `src/`, from `dist/` and from the bundled
 * `dist/cli.js` alike.
 */
export function packageRoot(): string {
  if (root !== undefined) return root;
  for (let dir = dirname(fileURLToPath(import.meta.url)); ; dir = dirname(dir)) {
    const pkg = join(dir, 'package.json');
    if (existsSync(pkg) && (JSON.parse(readFileSync(pkg, 'utf8')) as { name?: string }).name === 'skills-mcp')
      return (root = dir);
    if (dirname(dir) === dir) throw new Error('skills-mcp: cannot find its package.json above its own code');
  }
}

/** The package version, from package.json. */
export function packageVersion(): string {
  return (JSON.parse(readFileSync(join(packageRoot(), 'package.json'), 'utf8')) as { version: string })
    .version;
}
