import { randomBytes } from 'node:crypto';
import {
  chmodSync,
  existsSync,
  mkdirSync,
  readdirSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { dirname, join } from 'node:path';
import { COMMIT_ID, type GitSource } from '../config/git-source-schema.js';
import { SkillsError } from '../errors.js';
import { inCheckout, pathspec, pinFile } from './git-checkout.js';
import { runGit } from './run-git.js';
import { treeSizeProblem } from './tree-size-problem.js';

/** Tree entry modes git records for a symbolic link and for a submodule. */
const LINK_MODES = new Set(['120000', '160000']);

/**
 * Fetches the commit a source names (only that commit, no tags, no submodules) into a new folder, checks it out, and
 * puts it in place of `checkout` with its pin file (after `beforeSwap`, which may refuse it by throwing: then nothing
 * changes). Refused when the commit is not the one pinned, `path:` is not a
 * folder in it, or it holds links or submodules there. Returns the commit served.
 */
export function fetchGitSource(
  source: GitSource,
  checkout: string,
  env: NodeJS.ProcessEnv,
  beforeSwap?: (commit: string) => void,
): string {
  const parent = dirname(checkout);
  mkdirSync(parent, { recursive: true, mode: 0o700 });
  const tmp = `${checkout}.tmp-${randomBytes(6).toString('hex')}`;
  try {
    runGit(['init', '--quiet', '--template=', tmp], parent, env);
    // Only the server's user may enter the checkout, whatever the umask.
    chmodSync(tmp, 0o700);
    const tls: Record<string, string> =
      source.ca_file === undefined ? {} : { GIT_SSL_CAINFO: source.ca_file };
    const git = (...args: string[]) => runGit([...inCheckout(tmp), ...args], tmp, env, tls);
    try {
      runGit(
        [
          ...inCheckout(tmp),
          '-c',
          'fetch.unpackLimit=1',
          'fetch',
          '--quiet',
          '--depth=1',
          '--no-tags',
          '--no-recurse-submodules',
          '--end-of-options',
          source.git,
          source.ref,
        ],
        tmp,
        env,
        tls,
        source.max_bytes,
      );
    } catch (e) {
      if (source.git.startsWith('https://') && e instanceof Error && /certificate/i.test(e.message))
        throw refused(
          source,
          `its https server's certificate is not trusted (${e.message}). Set ca_file: to a PEM file of the authority that signed it`,
        );
      if (largestPack(tmp) >= source.max_bytes)
        throw refused(
          source,
          `the fetch was stopped at max_bytes (${source.max_bytes} bytes of objects)`,
          TOO_LARGE,
        );
      throw e;
    }
    const commit = git('rev-parse', '--verify', '--end-of-options', 'FETCH_HEAD^{commit}').trim();
    if (!COMMIT_ID.test(commit) || (COMMIT_ID.test(source.ref) && commit !== source.ref))
      throw refused(source, `the repository gave commit ${commit.slice(0, 40)}, not ${source.ref}`);
    const spec = pathspec(source.path);
    const kind = spec === '.' ? 'tree' : runGitOr(() => git('cat-file', '-t', `${commit}:${spec}`).trim());
    if (kind !== 'tree')
      throw refused(source, `path ${source.path} is not a folder at commit ${commit.slice(0, 12)}`);
    const tooLarge = treeSizeProblem(git('ls-tree', '-r', '-l', '-z', '--end-of-options', commit), source);
    if (tooLarge !== undefined) throw refused(source, tooLarge, TOO_LARGE);
    const links = git('ls-tree', '-r', '-z', '--end-of-options', commit, '--', spec)
      .split('\0')
      .filter((l) => LINK_MODES.has(l.split(' ')[0] ?? ''))
      .map((l) => l.slice(l.indexOf('\t') + 1));
    if (links.length > 0)
      throw refused(
        source,
        `links and submodules are not served, and ${source.path} holds ${links.slice(0, 3).join(', ')}`,
      );
    git('checkout', '--quiet', '--detach', commit);
    writeFileSync(`${tmp}.pin`, `${JSON.stringify({ url: source.git, ref: source.ref, commit })}\n`, {
      mode: 0o600,
    });
    beforeSwap?.(commit);
    if (swapIn(tmp, checkout)) renameSync(`${tmp}.pin`, pinFile(checkout));
    return commit;
  } finally {
    rmSync(tmp, { recursive: true, force: true });
    rmSync(`${tmp}.pin`, { force: true });
  }
}

/**
 * Puts `tmp` where `checkout` is, removing what was there. False when there was none and another process put its own
 * there first (two starts fetching a new source at once): that one is kept, and checked as any checkout is.
 */
function swapIn(tmp: string, checkout: string): boolean {
  if (!existsSync(checkout)) {
    try {
      renameSync(tmp, checkout);
      return true;
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      if (code === 'ENOTEMPTY' || code === 'EEXIST') return false;
      throw e;
    }
  }
  const old = `${checkout}.old-${randomBytes(6).toString('hex')}`;
  renameSync(checkout, old);
  renameSync(tmp, checkout);
  rmSync(old, { recursive: true, force: true });
  return true;
}

function runGitOr(f: () => string): string | undefined {
  try {
    return f();
  } catch {
    return undefined;
  }
}

/** The size of the largest pack file (or pack being received) in a checkout's object store. */
function largestPack(checkout: string): number {
  const dir = join(checkout, '.git', 'objects', 'pack');
  try {
    return Math.max(0, ...readdirSync(dir).map((n) => statSync(join(dir, n)).size));
  } catch {
    return 0;
  }
}

const TOO_LARGE =
  'Pin a smaller commit, or raise max_bytes / max_files of this source in skills-mcp.yaml if it is trusted.';

const refused = (
  source: GitSource,
  why: string,
  hint = 'Pin a commit whose skills folder holds plain files and folders only.',
) =>
  new SkillsError(
    'SOURCE_INVALID',
    `git source ${source.git}: ${why}${hint === TOO_LARGE ? `. ${TOO_LARGE}` : ''}`,
    {
      hint,
    },
  );
