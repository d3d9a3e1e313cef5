/**
 * Paths in a workspace that tools on the host read and act on without being asked: version-control metadata
 * (git hooks, `core.fsmonitor`, `commondir`…), git hook managers' settings (husky, pre-commit, lefthook,
 * overcommit), shell and direnv start-up files, package-manager settings that name programs to run, editor task
 * and launch settings, coding agents' hooks and MCP server lists, and this server's own `skills-mcp.yaml` (read
 * from the folder it starts in). A run that writes to the workspace never changes these on the host, whatever it
 * did to them in its private copy.
 */
const NEVER_APPLIED_DIRS = new Set([
  '.git',
  '.hg',
  '.svn',
  '.jj',
  '.vscode',
  '.idea',
  '.devcontainer',
  '.direnv',
  '.husky',
  // Project settings of coding agents: hooks and MCP servers they start on the host.
  '.claude',
  '.cursor',
  '.gemini',
  '.codex',
  '.continue',
  '.amazonq',
  '.zed',
]);

const NEVER_APPLIED_FILES = new Set([
  '.git',
  '.gitmodules',
  '.gitconfig',
  '.lfsconfig',
  '.pre-commit-config.yaml',
  '.pre-commit-config.yml',
  ...['lefthook', '.lefthook', 'lefthook-local', '.lefthook-local'].flatMap((n) =>
    ['yml', 'yaml', 'toml', 'json'].map((ext) => `${n}.${ext}`),
  ),
  '.overcommit.yml',
  '.envrc',
  '.bashrc',
  '.bash_profile',
  '.bash_login',
  '.bash_logout',
  '.profile',
  '.zshrc',
  '.zprofile',
  '.zshenv',
  '.zlogin',
  '.zlogout',
  '.inputrc',
  '.npmrc',
  '.yarnrc',
  '.yarnrc.yml',
  '.pnpmfile.cjs',
  '.hgrc',
  // MCP servers a client starts for this project, and this server's own settings (approval, sandbox).
  '.mcp.json',
  'skills-mcp.yaml',
]);

/** Code points HFS+ ignores in names (so `.g\u200cit` is `.git` there), as git itself lists them. */
const HFS_IGNORED = /[\u200c-\u200f\u202a-\u202e\u206a-\u206f\ufeff]/gu;

/**
 * A name as a case-insensitive, Windows or macOS filesystem may resolve it: a workspace on such a filesystem
 * (macOS, a Windows drive under WSL, a casefolded ext4 folder) opens `.GIT/config` or `.Envrc` as `.git/config` and
 * `.envrc`. Lower case, without the code points HFS+ ignores, an NTFS stream suffix (`.git::$INDEX_ALLOCATION`) or
 * the trailing dots and spaces Windows drops.
 */
function folded(name: string): string {
  return name
    .normalize('NFC')
    .replace(HFS_IGNORED, '')
    .toLowerCase()
    .replace(/:.*$/su, '')
    .replace(/[. ]+$/u, '');
}

/** An 8.3 short name (`GIT~1`, `ENVRC~1`) may stand for any long name on a Windows filesystem. */
const SHORT_NAME = /^[^.~]{1,8}~[0-9]+(\.[^.]{0,3})?$/u;

function refusedName(name: string, set: ReadonlySet<string>): string | undefined {
  const f = folded(name);
  if (set.has(f)) return name === f ? name : `${JSON.stringify(name)} (${f} on some filesystems)`;
  if (SHORT_NAME.test(f)) return `${JSON.stringify(name)} (a short name that may stand for one of these)`;
  return undefined;
}

/**
 * Why the change at `rel` (a POSIX path relative to the workspace) is never applied, or undefined when it may be.
 * Names are compared as a case-insensitive filesystem would. Pure.
 */
export function neverApplied(rel: string): string | undefined {
  const parts = rel.split('/');
  for (const p of parts.slice(0, -1)) {
    const dir = refusedName(p, NEVER_APPLIED_DIRS);
    if (dir !== undefined) return `inside ${dir}/, which host tools act on`;
  }
  const name = parts.at(-1) ?? '';
  const why = refusedName(name, NEVER_APPLIED_DIRS) ?? refusedName(name, NEVER_APPLIED_FILES);
  if (why !== undefined) return `${why} is read and acted on by host tools`;
  return undefined;
}
