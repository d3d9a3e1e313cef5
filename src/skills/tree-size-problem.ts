import type { GitSource } from '../config/git-source-schema.js';

/**
 * Why a commit is too large to check out under a source's limits, or undefined: from `git ls-tree -r -l -z` of it
 * (`<mode> <type> <id> <size>\t<path>` entries), more files than max_files, or more bytes of files than max_bytes.
 */
export function treeSizeProblem(
  lsTree: string,
  limits: Pick<GitSource, 'max_bytes' | 'max_files'>,
): string | undefined {
  let files = 0;
  let bytes = 0;
  for (const entry of lsTree.split('\0')) {
    if (entry === '') continue;
    files++;
    const size = Number(entry.slice(0, entry.indexOf('\t')).trim().split(/\s+/)[3]);
    if (Number.isFinite(size)) bytes += size;
  }
  if (files > limits.max_files)
    return `the commit holds ${files} files, over max_files (${limits.max_files}): it was not checked out`;
  if (bytes > limits.max_bytes)
    return `the commit's files hold ${bytes} bytes, over max_bytes (${limits.max_bytes}): it was not checked out`;
  return undefined;
}
