import { readFileSync } from 'node:fs';

/** The package version, read from package.json next to dist/ (or src/ when run from source). */
export function packageVersion(): string {
  const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
    version: string;
  };
  return pkg.version;
}

/** The package root folder (holds package.json, skills/, sandbox-profiles/). */
export const packageRoot = (): string => new URL('../../', import.meta.url).pathname.replace(/\/$/, '');
