import { existsSync, lstatSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import * as z from 'zod';
import { COMMIT_ID, type GitSource } from '../config/git-source-schema.js';
import { isSkillsError } from '../errors.js';
import { inCheckout, pathspec, pinFile } from './git-checkout.js';
import { isInside } from './list-skill-files.js';
import { checkoutSnapshot } from './checkout-snapshot.js';
import { runGit } from './run-git.js';
import { unsafeFolder } from './unsafe-folder.js';

/** What a source's checkout is: served (at `commit`, from `root`), not fetched yet, or not as it was fetched. */
export type GitSourceState =
  | { state: 'ok'; commit: string; root: string }
  | { state: 'missing' }
  /** Its folders could be changed by another user: not served whatever they hold. */
  | { state: 'unsafe'; why: string }
  | { state: 'changed'; commit?: string; why: string };

const PinSchema = z.strictObject({
  url: z.string().describe('The URL fetched'),
  ref: z.string().describe('The ref as configured when fetched'),
  commit: z.string().regex(COMMIT_ID).describe('The commit fetched'),
});

/** Changed entries named in a refusal; the rest are counted. */
const SHOWN = 5;

/**
 * Checks a checkout without touching the network: its folders are the server user's alone, its pin file names this URL and ref (and, for a commit id, that
 * commit), HEAD is the pinned commit, and the files on disk, ignored ones included, hash to that commit's tree.
 */
export function checkGitSource(
  source: GitSource,
  checkout: string,
  env: NodeJS.ProcessEnv,
  cache?: CheckCache,
): GitSourceState {
  const unsafe = unsafeFolder(checkout);
  if (unsafe !== undefined) return { state: 'unsafe', why: unsafe };
  if (cache === undefined) return checkAfresh(source, checkout, env);
  // Taken before the check, so a change made while it hashes shows in the next snapshot.
  const key = snapshotKey(source, checkout, cache.now());
  if (key !== undefined && cache.verified?.key === key) return cache.verified.state;
  const st = checkAfresh(source, checkout, env);
  cache.verified = key !== undefined && st.state === 'ok' ? { key, state: st } : undefined;
  return st;
}

/** The last check of one source that passed, and the snapshot of its checkout taken before it. */
export interface CheckCache {
  verified?: { key: string; state: GitSourceState } | undefined;
  /** The wall clock in nanoseconds (files changed in the two seconds before it are not taken on their lstat). */
  now: () => bigint;
}

/** An empty cache for `checkGitSource`: one per source, kept by whoever checks it again and again. */
export const createCheckCache = (now = () => BigInt(Date.now()) * 1_000_000n): CheckCache => ({ now });

const snapshotKey = (source: GitSource, checkout: string, now: bigint): string | undefined => {
  const snapshot = checkoutSnapshot(checkout, [pinFile(checkout)], now);
  return snapshot === undefined ? undefined : `${source.git}\0${source.ref}\0${source.path}\0${snapshot}`;
};

function checkAfresh(source: GitSource, checkout: string, env: NodeJS.ProcessEnv): GitSourceState {
  if (!existsSync(pinFile(checkout)) && !existsSync(checkout)) return { state: 'missing' };
  let pin: z.infer<typeof PinSchema>;
  try {
    pin = PinSchema.parse(JSON.parse(readFileSync(pinFile(checkout), 'utf8')));
  } catch {
    return { state: 'changed', why: `its pin file ${pinFile(checkout)} is missing or unreadable` };
  }
  if (pin.url !== source.git || pin.ref !== source.ref)
    return {
      state: 'changed',
      commit: pin.commit,
      why: `it was fetched at ${pin.ref}, and the configuration now names ${source.ref}`,
    };
  if (!lstatSync(checkout, { throwIfNoEntry: false })?.isDirectory())
    return { state: 'changed', commit: pin.commit, why: `${checkout} is not a folder` };
  if (COMMIT_ID.test(source.ref) && pin.commit !== source.ref)
    return {
      state: 'changed',
      commit: pin.commit,
      why: `its pin file names commit ${pin.commit.slice(0, 12)}, not the pinned ${source.ref}`,
    };
  const git = (...args: string[]) => runGit([...inCheckout(checkout), ...args], checkout, env);
  let head: string;
  let changes: string[];
  try {
    head = git('rev-parse', '--verify', 'HEAD^{commit}').trim();
    changes = head === pin.commit ? diskChanges(checkout, pin.commit, env) : [];
  } catch (e) {
    if (!isSkillsError(e)) throw e;
    return { state: 'changed', commit: pin.commit, why: `its repository cannot be read (${e.message})` };
  }
  if (head !== pin.commit)
    return {
      state: 'changed',
      commit: pin.commit,
      why: `its HEAD is ${head.slice(0, 12)}, not the pinned ${pin.commit.slice(0, 12)}`,
    };
  if (changes.length > 0) {
    const more = changes.length > SHOWN ? ` and ${changes.length - SHOWN} more` : '';
    return {
      state: 'changed',
      commit: pin.commit,
      why: `its files differ from commit ${pin.commit.slice(0, 12)}: ${changes.slice(0, SHOWN).join(', ')}${more}`,
    };
  }
  const root = join(checkout, pathspec(source.path));
  let real: string;
  try {
    real = realpathSync(root);
  } catch {
    return { state: 'changed', commit: pin.commit, why: `it has no folder ${source.path}` };
  }
  if (!isInside(realpathSync(checkout), real) || !lstatSync(real).isDirectory())
    return {
      state: 'changed',
      commit: pin.commit,
      why: `${source.path} is not a folder inside the repository`,
    };
  return { state: 'ok', commit: pin.commit, root: real };
}

/**
 * What differs between the files on disk and `commit` (`M path`, `A path`, `D path`), hashing every file into a
 * scratch index and object folder: no index entry, stat cache, skip-worktree flag or object of the checkout's own is
 * trusted, only the commit object (which git checks against its id) and the tree id it names.
 */
function diskChanges(checkout: string, commit: string, env: NodeJS.ProcessEnv): string[] {
  const git = (extra: Record<string, string>, ...args: string[]) =>
    runGit([...inCheckout(checkout), ...args], checkout, env, extra);
  const want = git({}, 'rev-parse', '--verify', '--end-of-options', `${commit}^{tree}`).trim();
  const objects = git({}, 'rev-parse', '--path-format=absolute', '--git-path', 'objects').trim();
  const scratch = mkdtempSync(`${checkout}.check-`);
  try {
    mkdirSync(join(scratch, 'objects'));
    const fresh = {
      GIT_INDEX_FILE: join(scratch, 'index'),
      GIT_OBJECT_DIRECTORY: join(scratch, 'objects'),
      GIT_ALTERNATE_OBJECT_DIRECTORIES: objects,
    };
    git(fresh, 'add', '--all', '--force', '--', '.');
    if (git(fresh, 'write-tree').trim() === want) return [];
    const named = git(fresh, 'diff-index', '--cached', '--no-renames', '--name-status', '-z', want, '--')
      .split('\0')
      .filter((l) => l !== '');
    const changes: string[] = [];
    for (let i = 0; i + 1 < named.length; i += 2) changes.push(`${named[i]} ${named[i + 1]}`);
    return changes.length > 0 ? changes : ['its object store does not hold the tree of the commit as pinned'];
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}
