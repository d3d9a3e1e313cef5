import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  BuiltForLaterNodeError,
  betterSqlite3BuiltFor,
  builtForLaterRelease,
} from '../../src/audit/sqlite/better-sqlite3-build.js';
import { explainLoadFailure } from '../../src/audit/sqlite/explain-load-failure.js';

const dirs: string[] = [];
afterEach(() => dirs.splice(0).forEach((d) => rmSync(d, { recursive: true, force: true })));

/** A package folder as node-gyp leaves it: build/config.gypi naming the headers it compiled against. */
function builtPackage(config: { nodedir?: string; userAgentNode?: string }): string {
  const dir = mkdtempSync(join(tmpdir(), 'bsq-build-'));
  dirs.push(dir);
  mkdirSync(join(dir, 'build'));
  const vars = [
    `"node_module_version": 137`,
    ...(config.nodedir === undefined ? [] : [`"nodedir": "${config.nodedir}"`]),
    ...(config.userAgentNode === undefined
      ? []
      : [`"user_agent": "npm/11.19.1 node/v${config.userAgentNode} linux x64 workspaces/false"`]),
  ];
  writeFileSync(
    join(dir, 'build', 'config.gypi'),
    `# Do not edit.\n{\n  "variables": {\n    ${vars.join(',\n    ')}\n  }\n}\n`,
  );
  return dir;
}

function headers(version: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'node-headers-'));
  dirs.push(dir);
  mkdirSync(join(dir, 'include', 'node'), { recursive: true });
  const [major, minor, patch] = version.split('.');
  writeFileSync(
    join(dir, 'include', 'node', 'node_version.h'),
    `#define NODE_MAJOR_VERSION ${major}\n#define NODE_MINOR_VERSION ${minor}\n#define NODE_PATCH_VERSION ${patch}\n`,
  );
  return dir;
}

describe('better-sqlite3 compiled against a later release of the running Node line', () => {
  it('reads the release from the headers node-gyp compiled against, else from the Node that ran npm', () => {
    expect(
      betterSqlite3BuiltFor(builtPackage({ nodedir: headers('24.22.3'), userAgentNode: '24.9.0' })),
    ).toBe('24.22.3');
    // .ci/on-node.sh's headers are a temporary download, gone after the install.
    expect(
      betterSqlite3BuiltFor(builtPackage({ nodedir: '/nonexistent/node', userAgentNode: '24.22.3' })),
    ).toBe('24.22.3');
    expect(betterSqlite3BuiltFor(builtPackage({}))).toBeUndefined();
    // A prebuilt binary leaves no config.gypi: nothing is known, and nothing is refused.
    const prebuilt = mkdtempSync(join(tmpdir(), 'bsq-prebuilt-'));
    dirs.push(prebuilt);
    expect(betterSqlite3BuiltFor(prebuilt)).toBeUndefined();
  });

  it('refuses only an earlier release of the same line than the one built against', () => {
    expect(builtForLaterRelease('24.22.3', '24.21.0')).toBe(true);
    expect(builtForLaterRelease('24.22.3', '24.22.1')).toBe(true);
    expect(builtForLaterRelease('24.22.3', '24.22.3')).toBe(false);
    expect(builtForLaterRelease('24.19.0', '24.22.3')).toBe(false);
    expect(builtForLaterRelease('24.22.3', '22.23.5')).toBe(false);
    expect(builtForLaterRelease('20.20.2', '20.20.2')).toBe(false);
  });

  it('says which release it was built against, that this one is earlier, and the fix', () => {
    const { message, hint } = explainLoadFailure(new BuiltForLaterNodeError('24.22.3'));
    expect(message).toContain('compiled against Node 24.22.3');
    expect(message).toContain(`earlier Node ${process.version}`);
    expect(hint).toContain('npm rebuild better-sqlite3');
    expect(message + hint).not.toMatch(/writable/i);
  });
});
