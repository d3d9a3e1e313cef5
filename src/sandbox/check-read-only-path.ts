import { readFileSync, realpathSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { isUnder } from './host-layout.js';
import { isCleanAbsolutePath } from './validate-plan.js';

/** Never mounted, nor any folder holding them: credentials, the host's own secrets, container runtimes' sockets. */
const SECRET_PATHS = [
  '/root',
  '/etc/shadow',
  '/etc/shadow-',
  '/etc/gshadow',
  '/etc/gshadow-',
  '/etc/sudoers',
  '/etc/sudoers.d',
  '/etc/ssh',
  '/etc/ssl/private',
  '/etc/gitconfig',
  '/run/docker.sock',
  '/var/run/docker.sock',
  '/run/containerd',
  '/var/run/containerd',
  '/run/podman',
  '/var/lib/docker',
  '/var/lib/containerd',
  '/run/user',
];
/** Below every home folder. */
const HOME_SECRETS = [
  '.ssh',
  '.gnupg',
  '.aws',
  '.azure',
  '.kube',
  '.docker',
  '.config/gcloud',
  '.config/gh',
  '.password-store',
  '.netrc',
  '.pgpass',
  '.git-credentials',
  '.npmrc',
  '.pypirc',
  '.local/state/skills-mcp',
];
/** The sandbox builds its own. */
const NEVER = ['/proc', '/sys', '/dev'];

/** Home folders of the host's accounts (from the real /etc/passwd) and `home`. */
function homeFolders(home: string | undefined): string[] {
  let passwd = '';
  try {
    passwd = readFileSync('/etc/passwd', 'utf8');
  } catch {
    // No account list: only `home` is known.
  }
  const homes = passwd
    .split('\n')
    .map((l) => l.split(':')[5])
    .filter((h): h is string => h !== undefined && h.startsWith('/') && h !== '/');
  return [...new Set(home === undefined ? homes : [...homes, home])];
}

/** Everything an operator's read-only path may neither be, lie below, nor hold. */
export function forbiddenMounts(o: { home?: string; serverPaths?: readonly string[] }): string[] {
  const homes = homeFolders(o.home);
  return [
    ...SECRET_PATHS,
    ...homes.flatMap((h) => HOME_SECRETS.map((s) => join(h, s))),
    ...(o.serverPaths ?? []),
  ];
}

/**
 * Why `p` cannot be added as a read-only path of the sandbox, or undefined when it can: it must be absolute and
 * normalized, exist, be its own real path (no links to follow later), lie outside /proc, /sys and /dev, neither be
 * nor hold a secrets folder or the server's state (`forbidden`), and be writable by no one but its owner.
 */
export function readOnlyPathProblem(p: string, forbidden: readonly string[]): string | undefined {
  if (!isCleanAbsolutePath(p) || p === '/') return 'must be an absolute, normalized path other than /';
  if (isUnder(p, NEVER)) return 'is built by the sandbox itself (/proc, /sys and /dev are never mounted)';
  let real: string;
  let mode: number;
  try {
    real = realpathSync(p);
    mode = statSync(real).mode;
  } catch {
    return 'does not exist';
  }
  if (real !== p) return `is or lies below a symbolic link; give the real path ${JSON.stringify(real)}`;
  const secret = forbidden.find((s) => isUnder(p, [s]) || isUnder(s, [p]));
  if (secret !== undefined) return `is or holds ${secret}, which is never mounted into the sandbox`;
  if ((mode & 0o022) !== 0)
    return 'is writable by its group or by every user: mount only what no one else can change';
  return undefined;
}
