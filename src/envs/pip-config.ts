import { execFile } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';
import { dirname, isAbsolute, normalize } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The operator's pip settings an install honours, as PIP_* variables for the install sandbox. */
export interface PipSettings {
  env: Record<string, string>;
  /** Local folders and files they name (find-links folders, file:// indexes, the CA file): mounted read-only. */
  mounts: string[];
  /** Where packages come from, for the approval form, logs and audit: URLs without credentials. */
  sources: string[];
}

/** Settings passed through. Others (client certificates, keyring, config files) are not. */
const KEYS = [
  'index-url',
  'extra-index-url',
  'find-links',
  'no-index',
  'cert',
  'trusted-host',
  'timeout',
  'default-timeout',
  'retries',
  'proxy',
  'no-build-isolation',
  'only-binary',
  'prefer-binary',
];

/** `scheme://user:pass@host/…` → `scheme://***@host/…`. */
export function redactUrl(u: string): string {
  return u.replace(/^([a-z][a-z0-9+.-]*:\/\/)[^/@\s]*@/i, '$1***@');
}

/**
 * The credentials in the settings' URLs (`user:pass@`, its password and a token-like user name): an installer's
 * output is cleaned of them before it is shown, logged or audited (a build script may print its environment).
 */
export function credentialsIn(env: Readonly<Record<string, string>>): string[] {
  const out = new Set<string>();
  for (const value of Object.values(env))
    for (const m of value.matchAll(/[a-z][a-z0-9+.-]*:\/\/([^/@\s]+)@/gi)) {
      const userinfo = m[1] ?? '';
      out.add(userinfo);
      for (const part of userinfo.split(':')) if (part.length >= 4) out.add(part);
      try {
        out.add(decodeURIComponent(userinfo));
      } catch {
        // not percent-encoded
      }
    }
  return [...out].sort((a, b) => b.length - a.length);
}

/** `text` with every credential replaced by `***`. */
export const withoutCredentials = (text: string, credentials: readonly string[]): string =>
  credentials.reduce((t, c) => t.split(c).join('***'), text);

const localPath = (v: string): string | undefined => {
  if (v.startsWith('file:')) {
    try {
      return fileURLToPath(v);
    } catch {
      return undefined;
    }
  }
  return isAbsolute(v) ? v : undefined;
};

/** A local path without a trailing slash (`file:///srv/pypi/simple/` → `/srv/pypi/simple`). */
const cleanPath = (p: string): string => (p === '/' ? p : normalize(p).replace(/\/+$/, ''));

/**
 * Why a folder cannot be mounted read-only for an install (secrets, the server's state, writable by others), or
 * undefined when it can: the same checks as `sandbox.read_only_paths`.
 */
export type MountCheck = (path: string) => string | undefined;

/** Parses `pip config list` output (`scope.key='value'` lines); environment entries win over files. */
export function parsePipConfigList(text: string): Map<string, string> {
  const fromFiles = new Map<string, string>();
  const fromEnv = new Map<string, string>();
  for (const line of text.split('\n')) {
    const m = /^([^.=]*)\.([a-z-]+)='((?:[^'\\]|\\.)*)'$/.exec(line.trim());
    if (m === null) continue;
    const [, scope = '', key = '', value = ''] = m;
    if (!KEYS.includes(key)) continue;
    if (scope === ':env:') fromEnv.set(key, value);
    else if (scope === 'global' || scope === 'install') fromFiles.set(key, value);
  }
  return new Map([...fromFiles, ...fromEnv]);
}

/**
 * The folder a local index's or find-links page's relative links resolve into, when it may be mounted: a simple
 * index's project pages (`<root>/<project>/`) link to files by relative URLs such as `../../files/x.whl`, which
 * land beside the index root, so its parent is mounted too (read-only, after `check`). A find-links HTML file's
 * links resolve from its own folder.
 */
function linkedTree(
  key: string,
  p: string,
  check: MountCheck | undefined,
): { tree: string; refused?: string } | undefined {
  let dir: boolean;
  try {
    dir = statSync(p).isDirectory();
  } catch {
    return undefined;
  }
  const tree = key === 'find-links' ? (dir ? undefined : dirname(p)) : dir ? dirname(p) : undefined;
  if (tree === undefined || tree === '/' || check === undefined) return undefined;
  const refused = check(tree);
  return refused === undefined ? { tree } : { tree, refused };
}

/**
 * Turns the parsed settings into PIP_* variables, read-only mounts and display sources. Local index URLs and
 * find-links are mounted read-only; so is the folder their relative links resolve into, when `check` allows it.
 */
export function pipSettings(config: ReadonlyMap<string, string>, check?: MountCheck): PipSettings {
  const env: Record<string, string> = { PIP_CONFIG_FILE: '/dev/null' };
  const mounts: string[] = [];
  const sources: string[] = [];
  for (const [key, value] of config) {
    env[`PIP_${key.toUpperCase().replace(/-/g, '_')}`] = value;
    if (key === 'cert') {
      if (existsSync(value)) mounts.push(value);
      continue;
    }
    if (key === 'index-url' || key === 'extra-index-url' || key === 'find-links') {
      for (const v of value.split(/\s+/).filter(Boolean)) {
        const found = localPath(v);
        const p = found === undefined ? undefined : cleanPath(found);
        if (p !== undefined && existsSync(p)) {
          const linked = linkedTree(key, p, check);
          const tree = linked?.refused === undefined ? linked?.tree : undefined;
          mounts.push(tree ?? p);
          sources.push(
            `${key} ${p}${
              linked === undefined
                ? ''
                : tree !== undefined
                  ? ` (links into ${tree}, mounted read-only)`
                  : ` (links into ${linked.tree}, not mounted: it ${linked.refused})`
            }`,
          );
        } else sources.push(`${key} ${p ?? redactUrl(v)}`);
      }
    }
    if (key === 'no-index' && /^(1|true|yes|on)$/i.test(value)) sources.push('no index');
  }
  if (!config.has('index-url') && !(config.get('no-index') ?? '').match(/^(1|true|yes|on)$/i))
    sources.unshift('index-url https://pypi.org/simple (pip default)');
  return { env, mounts: [...new Set(mounts)], sources };
}

/** Asks the operator's pip (of `python`, with the server's environment) for its effective settings. */
export function readPipSettings(
  env: NodeJS.ProcessEnv,
  check?: MountCheck,
  python = 'python3',
): Promise<PipSettings> {
  const clean = Object.fromEntries(Object.entries(env).filter(([k]) => !k.startsWith('PYTHON')));
  return new Promise((resolve) => {
    execFile(python, ['-m', 'pip', 'config', 'list'], { env: clean, cwd: '/', timeout: 30_000 }, (err, out) =>
      resolve(pipSettings(err === null ? parsePipConfigList(out) : new Map(), check)),
    );
  });
}
