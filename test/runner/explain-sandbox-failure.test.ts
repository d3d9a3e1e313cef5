import { describe, expect, it } from 'vitest';
import { explainSandboxFailure, type RunGrants } from '../../src/runner/explain-sandbox-failure.js';

const WS = '/home/u/project';
const off: RunGrants = {
  network: 'none',
  workspace: { path: WS, write: false },
  skillDir: '/state/bundles/abc',
};

/** What soffice printed in the sandbox before /etc/libreoffice and /etc/fonts were mounted. */
const SOFFICE_ABORT = `Warning: failed to launch javaldx - java may not function correctly
terminate called after throwing an instance of 'com::sun::star::uno::RuntimeException'
Unspecified Application Error`;

describe('explainSandboxFailure', () => {
  it.each<[string, string, RunGrants, string | undefined]>([
    [
      'python write to the read-only workspace',
      `OSError: [Errno 30] Read-only file system: '${WS}/out.txt'`,
      off,
      '`workspace: write`',
    ],
    [
      'node write to the read-only workspace',
      `Error: EROFS: read-only file system, open '${WS}/a/b.json'`,
      off,
      '`workspace: write`',
    ],
    [
      'shell write to the read-only workspace',
      `touch: cannot touch '${WS}/x': Read-only file system\ncp: cannot create regular file ${WS}/y: Read-only file system`,
      off,
      '`workspace: write`',
    ],
    [
      'a write to the skill copy',
      "OSError: [Errno 30] Read-only file system: '/state/bundles/abc/cache.json'",
      off,
      "skill's own folder is read-only",
    ],
    [
      'python name lookup with the network off',
      'socket.gaierror: [Errno -3] Temporary failure in name resolution',
      off,
      '`network: full`',
    ],
    [
      'node name lookup with the network off',
      'Error: getaddrinfo EAI_AGAIN registry.npmjs.org',
      off,
      '`network: full`',
    ],
    [
      'git and curl with the network off',
      "fatal: unable to access 'https://example.invalid/x.git/': Could not resolve host: example.invalid",
      off,
      '`network: full`',
    ],
    ['LibreOffice aborting', SOFFICE_ABORT, off, 'skills-mcp doctor'],
  ])('names the fix for %s', (_what, stderr, grants, hint) => {
    const hints = explainSandboxFailure(stderr, grants);
    expect(hints).toHaveLength(1);
    expect(hints[0]).toContain(hint);
  });

  it.each<[string, string, RunGrants]>([
    [
      'a read-only path outside the workspace',
      "OSError: [Errno 30] Read-only file system: '/usr/lib/x'",
      off,
    ],
    [
      'a workspace the run may write',
      `OSError: [Errno 30] Read-only file system: '${WS}/.git/hooks/pre-commit'`,
      { ...off, workspace: { path: WS, write: true } },
    ],
    [
      'a path that only starts like the workspace',
      `OSError: [Errno 30] Read-only file system: '${WS}-other/x'`,
      off,
    ],
    [
      'name resolution failing with the network on',
      'socket.gaierror: [Errno -2] Name or service not known',
      { ...off, network: 'full' },
    ],
    ['an ordinary failure', 'ValueError: bad input', off],
  ])('says nothing for %s', (_what, stderr, grants) => {
    expect(explainSandboxFailure(stderr, grants)).toEqual([]);
  });
});

describe('explainSandboxFailure and the operator overrides', () => {
  it('names the override that made the workspace read-only or took the network away', () => {
    const narrowed: RunGrants = { ...off, skill: 'docx', operator: { workspace: 'read', network: 'none' } };
    const [ws] = explainSandboxFailure(`OSError: [Errno 30] Read-only file system: '${WS}/a'`, narrowed);
    expect(ws).toContain('the operator set `skill_overrides.docx.workspace: read` in skills-mcp.yaml');
    expect(ws).toContain('`skill_overrides.docx.workspace: write` instead');
    const [net] = explainSandboxFailure('Temporary failure in name resolution', narrowed);
    expect(net).toContain('because the operator set `skill_overrides.docx.network: none` in skills-mcp.yaml');
  });

  it('offers the override next to the frontmatter key when the operator set nothing', () => {
    const plain: RunGrants = { ...off, skill: 'docx', operator: {} };
    expect(explainSandboxFailure('Temporary failure in name resolution', plain)[0]).toContain(
      'the operator sets `skill_overrides.docx.network: full` in skills-mcp.yaml',
    );
  });
});
