import { existsSync, lstatSync, readFileSync, realpathSync } from 'node:fs';
import { join } from 'node:path';
import * as z from 'zod';
import { COMMIT_ID, type GitSource } from '../config/git-source-schema.js';
import { isSkillsError } from '../errors.js';
import { inCheckout, pathspec, pinFile } from './git-checkout.js';
import { isInside } from './list-skill-files.js';
import { runGit } from './run-git.js';

/** What a source's checkout is: served (at `commit`, from `root`), not fetched yet, or not as it was fetched. */
export type GitSourceState =
  | { state: 'ok'; commit: string; root: string }
  | { state: 'missing' }
  | { state: 'changed'; commit?: string; why: string };

const PinSchema = z.strictObject({
  url: z.string().describe('The URL fetched'),
  ref: z.string().describe('The ref as configured when fetched'),
  commit: z.string().regex(COMMIT_ID).describe('The commit fetched'),
});

/** Changed entries named in a refusal; the rest are counted. */
const SHOWN = 5;

/**
 * Checks a checkout without touching the network: its pin file names this URL and ref, HEAD is the pinned commit, and
 * `git status` (ignored and untracked files included) finds nothing changed, added or removed.
 */
export function checkGitSource(source: GitSource, checkout: string, env: NodeJS.ProcessEnv): GitSourceState {
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
  const git = (...args: string[]) => runGit([...inCheckout(checkout), ...args], checkout, env);
  let head: string;
  let status: string[];
  try {
    head = git('rev-parse', '--verify', 'HEAD^{commit}').trim();
    status = git('status', '--porcelain=v1', '-z', '--ignored', '--untracked-files=all', '--no-renames')
      .split('\0')
      .filter((l) => l !== '');
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
  if (status.length > 0) {
    const named = status.slice(0, SHOWN).map((l) => `${l.slice(0, 2).trim() || '?'} ${l.slice(3)}`);
    const more = status.length > SHOWN ? ` and ${status.length - SHOWN} more` : '';
    return {
      state: 'changed',
      commit: pin.commit,
      why: `its files differ from commit ${pin.commit.slice(0, 12)}: ${named.join(', ')}${more}`,
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
