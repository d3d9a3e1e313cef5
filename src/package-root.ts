import { existsSync, readFileSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

let found: { root: string; version: string } | undefined;

/** The nearest folder above this module with skills-mcp's package.json, read once. */
function find(): { root: string; version: string } {
  if (found !== undefined) return found;
  for (let dir = dirname(fileURLToPath(import.meta.url)); ; dir = dirname(dir)) {
    const pkg = join(dir, 'package.json');
    if (existsSync(pkg)) {
      const { name, version } = JSON.parse(readFileSync(pkg, 'utf8')) as { name?: string; version: string };
      if (name === 'skills-mcp') return (found = { root: dir, version });
    }
    if (dirname(dir) === dir) throw new Error('skills-mcp: cannot find its package.json above its own code');
  }
}

/**
 * The package root folder (holds package.json, skills/, sandbox-profiles/). Found by walking up, so it holds from
 * `src/`, from `dist/` and from the bundled `dist/cli.js` alike.
 */
export const packageRoot = (): string => find().root;

/** The package version, from package.json. */
export const packageVersion = (): string => find().version;

/**
 * This build of skills-mcp: the version and the size and modification time of the file this code runs from (the
 * bundle, once built), so any rebuild or reinstall is another build. What it wrote for itself (the catalog cache)
 * is not trusted by another.
 */
export function packageBuild(): string {
  const st = statSync(fileURLToPath(import.meta.url));
  return `${packageVersion()}+${st.size}.${st.mtimeMs}`;
}
