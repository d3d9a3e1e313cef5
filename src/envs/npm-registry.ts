import { execFile } from 'node:child_process';
import { SkillsError } from '../errors.js';

/** npm's own default, used when the operator's npm cannot be asked. */
export const DEFAULT_NPM_REGISTRY = 'https://registry.npmjs.org/';

/**
 * The registry URL normalized (http or https, a trailing slash, no query or fragment), or a refusal naming the
 * setting. Credentials in it stay (npm needs them); everything shown goes through `redactUrl`.
 */
export function normalizeRegistry(value: string): string {
  let u: URL;
  try {
    u = new URL(value.trim());
  } catch {
    u = new URL('invalid:');
  }
  if (u.protocol !== 'https:' && u.protocol !== 'http:')
    throw new SkillsError('CONFIG_INVALID', 'the npm registry setting is not an http(s) URL', {
      hint: 'Set the registry npm should install from: `npm config set registry https://…/`.',
    });
  u.search = '';
  u.hash = '';
  if (!u.pathname.endsWith('/')) u.pathname += '/';
  return u.href;
}

/** True when `resolved` is a URL under `registry` (same scheme, host and port, below its path; no credentials). */
export function isUnderRegistry(resolved: string, registry: string): boolean {
  let u: URL;
  let r: URL;
  try {
    u = new URL(resolved);
    r = new URL(registry);
  } catch {
    return false;
  }
  return (
    u.username === '' &&
    u.password === '' &&
    u.protocol === r.protocol &&
    u.host === r.host &&
    u.pathname.startsWith(r.pathname)
  );
}

/**
 * Asks the operator's npm (on the server's PATH, with the server's environment, run from `/` so no project `.npmrc`
 * counts) for its registry. An npm that cannot answer gives npm's default.
 */
export function readNpmRegistry(env: NodeJS.ProcessEnv): Promise<string> {
  const clean = Object.fromEntries(Object.entries(env).filter(([k]) => k !== 'NODE_OPTIONS'));
  return new Promise((resolve, reject) => {
    execFile(
      'npm',
      ['config', 'get', 'registry'],
      { env: clean, cwd: '/', timeout: 30_000, maxBuffer: 64 * 1024 },
      (err, out) => {
        try {
          resolve(normalizeRegistry(err === null ? out : DEFAULT_NPM_REGISTRY));
        } catch (e) {
          reject(e instanceof Error ? e : new Error(String(e)));
        }
      },
    );
  });
}
