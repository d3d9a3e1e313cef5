import { describe, expect, it } from 'vitest';
import { ConfigSchema } from '../../src/config/config-schema.js';
import { formatIssues } from '../../src/config/load-config.js';

const COMMIT = '0123456789abcdef0123456789abcdef01234567';
/** The `path: message` lines a `skills:` list gives, or [] when it is accepted. */
const problems = (skills: unknown[]): string[] => {
  const r = ConfigSchema.safeParse({ skills });
  return r.success ? [] : formatIssues(r.error.issues);
};
const entry = (over: Record<string, unknown>) => ({ git: 'https://example.com/s.git', ref: COMMIT, ...over });

describe('the git entries of skills:', () => {
  it.each([
    ['an https URL', entry({})],
    ['an ssh URL', entry({ git: 'ssh://git@example.com/s.git' })],
    ['a file URL', entry({ git: 'file:///srv/git/s' })],
    ['a user name without a password', entry({ git: 'https://bot@example.com/s.git' })],
    ['a nested path', entry({ path: 'skills/public/' })],
    ['a branch name when allowed', entry({ ref: 'release/2.1', allow_moving_ref: true })],
  ])('accepts %s', (_what, e) => {
    expect(problems([e])).toEqual([]);
  });

  it.each([
    ['ext:: transports', entry({ git: 'ext::sh -c id' }), /^skills\.0\.git: must be a file:\/\/\/, https/],
    ['git://', entry({ git: 'git://example.com/s.git' }), /^skills\.0\.git: must be/],
    ['plain http', entry({ git: 'http://example.com/s.git' }), /^skills\.0\.git: must be/],
    ['the scp form', entry({ git: 'git@example.com:s.git' }), /^skills\.0\.git: must be/],
    [
      'a terminal escape in the URL',
      entry({ git: 'https://example.com/\u001b]0;x\u0007s.git' }),
      /^skills\.0\.git: must be/,
    ],
    [
      'a password in the URL',
      entry({ git: 'https://u:hunter2@example.com/s' }),
      /^skills\.0\.git: must not hold a password/,
    ],
    [
      'a path that climbs',
      entry({ path: 'skills/../../x' }),
      /^skills\.0\.path: must stay inside the repository/,
    ],
    ['an absolute path', entry({ path: '/etc' }), /^skills\.0\.path: must be a path relative/],
    ['the .git folder', entry({ path: '.git/hooks' }), /^skills\.0\.path: must not name the \.git folder/],
    ['a branch name', entry({ ref: 'main' }), /^skills\.0\.ref: "main" is a moving ref/],
    [
      'a short commit id',
      entry({ ref: COMMIT.slice(0, 12) }),
      /^skills\.0\.ref: "0123456789ab" is a moving ref/,
    ],
    ['an upper-case commit id', entry({ ref: COMMIT.toUpperCase() }), /^skills\.0\.ref: .* is a moving ref/],
    [
      'a ref that reads as an option',
      entry({ ref: '--upload-pack=x', allow_moving_ref: true }),
      /^skills\.0\.ref: must be a branch or tag name/,
    ],
    ['an unknown key', entry({ branch: 'main' }), /^skills\.0: Unrecognized key: "branch"/],
  ])('refuses %s with a path: message', (_what, e, message) => {
    const lines = problems([e]);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(message);
  });

  it('refuses one repository at two commits', () => {
    expect(problems([entry({}), entry({ ref: 'f'.repeat(40), path: 'other' })])).toEqual([
      `skills.1.ref: https://example.com/s.git is already listed at ${COMMIT}: one repository is served at one commit`,
    ]);
  });

  it('keeps folders in skills and sets the git entries apart', () => {
    const config = ConfigSchema.parse({ skills: ['./mine', entry({ path: 'skills' })] });
    expect(config.skills).toEqual(['./mine']);
    expect(config.git_sources).toEqual([
      {
        ...entry({ path: 'skills' }),
        allow_moving_ref: false,
        max_bytes: 512 * 1024 * 1024,
        max_files: 100_000,
      },
    ]);
  });
});
