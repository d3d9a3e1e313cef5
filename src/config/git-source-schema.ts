import * as z from 'zod';

/** A full commit id: what a pinned source names. */
export const COMMIT_ID = /^[0-9a-f]{40}$/;

/**
 * The URL schemes git may use for a source; everything else (`ext::`, `git://`, `http://`, `host:path`) is refused, and
 * so are control characters (the URL is shown to people).
 */
const ALLOWED_URL = /^(?:file:\/\/\/|https:\/\/|ssh:\/\/)[^\s\p{Cc}]+$/u;

/** What a fetch may bring by default: bytes of objects (and of checked-out files), and files in the checkout. */
export const DEFAULT_MAX_BYTES = 512 * 1024 * 1024;
export const DEFAULT_MAX_FILES = 100_000;

/** A branch or tag name git would accept, and never one that could pass for an option. */
const REF_NAME = /^(?!-)(?!.*\.\.)[A-Za-z0-9._/-]{1,255}$/;

/** Why a URL cannot be used, or undefined. */
export function gitUrlProblem(url: string): string | undefined {
  if (!ALLOWED_URL.test(url))
    return 'must be a file:///, https:// or ssh:// URL without spaces or control characters (ext::, git://, http:// and host:path forms are refused)';
  const auth = /^[a-z]+:\/\/([^/@]*)@/.exec(url)?.[1];
  if (auth?.includes(':') === true)
    return 'must not hold a password: the URL is shown and audited (use an ssh key for private repositories)';
  return undefined;
}

/** Why a `path:` does not stay inside the repository, or undefined. */
export function sourcePathProblem(path: string): string | undefined {
  if (path.startsWith('/') || /^[A-Za-z]:/.test(path) || path.includes('\\'))
    return 'must be a path relative to the repository top, with / between parts';
  const parts = path.split('/').filter((p) => p !== '' && p !== '.');
  if (parts.includes('..')) return 'must stay inside the repository (no ..)';
  if (parts.includes('.git')) return 'must not name the .git folder';
  return undefined;
}

export const GitSourceSchema = z
  .strictObject({
    git: z
      .string()
      .min(1)
      .max(2048)
      .superRefine((url, ctx) => {
        const why = gitUrlProblem(url);
        if (why !== undefined) ctx.addIssue({ code: 'custom', message: why });
      })
      .describe('Repository URL: file:///…, https://… or ssh://… (no password in it).'),
    ref: z
      .string()
      .min(1)
      .max(255)
      .describe(
        'The commit to serve, as its full 40-hex id. A branch or tag name is refused unless allow_moving_ref is true.',
      ),
    path: z
      .string()
      .min(1)
      .max(1024)
      .default('.')
      .superRefine((p, ctx) => {
        const why = sourcePathProblem(p);
        if (why !== undefined) ctx.addIssue({ code: 'custom', message: why });
      })
      .describe('The skills folder inside the repository, relative to its top (default: the top).'),
    max_bytes: z
      .number()
      .int()
      .min(1)
      .default(DEFAULT_MAX_BYTES)
      .describe(
        'The most bytes a fetch may write, objects and checked-out files each (default 512 MiB): a larger commit is refused.',
      ),
    max_files: z
      .number()
      .int()
      .min(1)
      .default(DEFAULT_MAX_FILES)
      .describe(
        'The most files the checked-out commit may hold (default 100,000): a larger commit is refused.',
      ),
    ca_file: z
      .string()
      .min(1)
      .refine((f) => f.startsWith('/'), 'must be an absolute path')
      .optional()
      .describe(
        'A PEM file of the certificate authorities trusted for this https source (git http.sslCAInfo), in place of the system ones.',
      ),
    allow_moving_ref: z
      .boolean()
      .default(false)
      .describe(
        'Accept a branch or tag name as ref: it is resolved once when fetched, and that commit is what is served until `skills-mcp sources update`.',
      ),
  })
  .superRefine((s, ctx) => {
    if (COMMIT_ID.test(s.ref)) return;
    if (!s.allow_moving_ref) {
      ctx.addIssue({
        code: 'custom',
        path: ['ref'],
        message: `"${s.ref.slice(0, 64)}" is a moving ref (a branch, a tag or a short id), not a commit: pin the full 40-hex commit id (\`git rev-parse ${REF_NAME.test(s.ref) ? s.ref : '<ref>'}\`), or set allow_moving_ref: true to serve the commit it names when fetched`,
      });
    } else if (!REF_NAME.test(s.ref)) {
      ctx.addIssue({
        code: 'custom',
        path: ['ref'],
        message: 'must be a branch or tag name (letters, digits, . _ / -) or a full 40-hex commit id',
      });
    }
  })
  .describe('A git repository pinned at one commit, fetched into the state folder (docs/skill-sources.md).');

export type GitSource = z.infer<typeof GitSourceSchema>;

/** Two entries of one repository must name one ref: there is one checkout per URL. */
export function oneRefPerUrl(entries: readonly (string | GitSource)[], ctx: z.RefinementCtx): void {
  const refs = new Map<string, string>();
  entries.forEach((e, i) => {
    if (typeof e === 'string') return;
    const had = refs.get(e.git);
    if (had === undefined) refs.set(e.git, e.ref);
    else if (had !== e.ref)
      ctx.addIssue({
        code: 'custom',
        path: [i, 'ref'],
        message: `${e.git} is already listed at ${had}: one repository is served at one commit`,
      });
  });
}
