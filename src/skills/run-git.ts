import { execFileSync } from 'node:child_process';
import { SkillsError } from '../errors.js';

/**
 * Settings given on every git command line, so a checkout's own `.git/config` cannot run anything: no hooks, no
 * fsmonitor, no links made, no submodules, no pager; and no attributes or ignore file of the server user's (git reads
 * `~/.config/git/attributes` even with no user configuration).
 */
const SAFE_CONFIG = [
  'core.attributesFile=/dev/null',
  'core.excludesFile=/dev/null',
  'core.hooksPath=/dev/null',
  'core.fsmonitor=false',
  'core.symlinks=false',
  'core.pager=cat',
  'submodule.recurse=false',
  'protocol.allow=never',
  'protocol.file.allow=always',
  'protocol.https.allow=always',
  'protocol.ssh.allow=always',
  'credential.helper=',
  // An https server sending under a byte a second for a minute is given up on.
  'http.lowSpeedLimit=1',
  'http.lowSpeedTime=60',
];

/**
 * The environment git runs with: none of the server's variables besides what finding programs and ssh keys needs; no
 * system or user git config, no prompts, only file, https and ssh transports, no replace objects.
 */
export function gitEnv(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const keep = ['PATH', 'HOME', 'SSH_AUTH_SOCK'] as const;
  return {
    ...Object.fromEntries(keep.flatMap((k) => (env[k] === undefined ? [] : [[k, env[k]]]))),
    LC_ALL: 'C',
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_CONFIG_GLOBAL: '/dev/null',
    GIT_TERMINAL_PROMPT: '0',
    GIT_ASKPASS: '',
    SSH_ASKPASS: '',
    GIT_ALLOW_PROTOCOL: 'file:https:ssh',
    GIT_NO_REPLACE_OBJECTS: '1',
    GIT_OPTIONAL_LOCKS: '0',
    GIT_LITERAL_PATHSPECS: '1',
    // A server that stops answering is given up on: 20 s to connect and greet, a minute silent after.
    GIT_SSH_COMMAND:
      'ssh -o BatchMode=yes -o ConnectTimeout=20 -o ServerAliveInterval=15 -o ServerAliveCountMax=4',
  };
}

/**
 * Runs `git args` in `cwd` with the safe settings (and `extra`, git variables set by the caller); returns its stdout.
 * A failure is SOURCE_INVALID with git's words.
 */
export function runGit(
  args: readonly string[],
  cwd: string,
  env: NodeJS.ProcessEnv,
  extra: Record<string, string> = {},
  maxFileBytes?: number,
): string {
  const git = ['git', ...SAFE_CONFIG.flatMap((c) => ['-c', c]), ...args];
  // No file git writes (a fetch keeps what it receives as one pack: fetch.unpackLimit=1) grows past the limit: the
  // kernel stops the writer (RLIMIT_FSIZE, set by util-linux's prlimit).
  const argv = maxFileBytes === undefined ? git : ['prlimit', `--fsize=${maxFileBytes}`, '--', ...git];
  try {
    return execFileSync(argv[0]!, argv.slice(1), {
      cwd,
      env: { ...gitEnv(env), ...extra },
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
      maxBuffer: 64 * 1024 * 1024,
      timeout: 10 * 60_000,
    });
  } catch (e) {
    const stderr = (e as { stderr?: unknown }).stderr;
    const said =
      typeof stderr === 'string'
        ? stderr
            .split('\n')
            .filter((l) => l.trim() !== '')
            .slice(0, 3)
            .join(' / ')
        : '';
    // The command, not the options naming the checkout before it.
    const command = args.find((a, i) => !a.startsWith('-') && args[i - 1] !== '-c') ?? '';
    throw new SkillsError('SOURCE_INVALID', `git ${command} failed${said === '' ? '' : `: ${said}`}`, {
      cause: e,
      hint: 'Check that git is installed and the URL and commit are right.',
    });
  }
}
