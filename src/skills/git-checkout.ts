import { createHash } from 'node:crypto';
import { join } from 'node:path';

/** Where the checkout of a repository is kept: `<sources>/git/<sha256 of its URL>`. */
export const checkoutDir = (sourcesDir: string, url: string): string =>
  join(sourcesDir, 'git', createHash('sha256').update(url).digest('hex'));

/** Beside the checkout: the URL, the ref as configured and the commit it was fetched at. */
export const pinFile = (checkout: string): string => `${checkout}.pin.json`;

/** git options that name the checkout's own repository, so git never looks for one in a parent folder. */
export const inCheckout = (checkout: string): string[] => [
  `--git-dir=${join(checkout, '.git')}`,
  `--work-tree=${checkout}`,
];

/** The pathspec of a source's `path:` (the repository top for `.`). */
export const pathspec = (path: string): string => {
  const parts = path.split('/').filter((p) => p !== '' && p !== '.');
  return parts.length === 0 ? '.' : parts.join('/');
};

/** `url@short-commit`: how a git source is named to people. */
export const sourceLabel = (url: string, commit: string): string => `${url}@${commit.slice(0, 12)}`;
