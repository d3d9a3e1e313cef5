import { describe, expect, it } from 'vitest';
import { defaultAuditPath } from '../../src/audit/index.js';

describe('defaultAuditPath', () => {
  it.each([
    [
      'XDG_STATE_HOME on Linux',
      { XDG_STATE_HOME: '/x/state' },
      'linux',
      '/home/u',
      '/x/state/skills-mcp/audit.db',
    ],
    ['~/.local/state on Linux', {}, 'linux', '/home/u', '/home/u/.local/state/skills-mcp/audit.db'],
    [
      'a relative XDG_STATE_HOME is ignored',
      { XDG_STATE_HOME: 'rel' },
      'linux',
      '/home/u',
      '/home/u/.local/state/skills-mcp/audit.db',
    ],
    [
      'an empty XDG_STATE_HOME is ignored',
      { XDG_STATE_HOME: '' },
      'linux',
      '/home/u',
      '/home/u/.local/state/skills-mcp/audit.db',
    ],
    [
      'Application Support on macOS',
      {},
      'darwin',
      '/Users/u',
      '/Users/u/Library/Application Support/skills-mcp/audit.db',
    ],
    [
      'XDG_STATE_HOME wins on macOS when set',
      { XDG_STATE_HOME: '/x' },
      'darwin',
      '/Users/u',
      '/x/skills-mcp/audit.db',
    ],
    [
      'LOCALAPPDATA on Windows',
      { LOCALAPPDATA: 'C:\\Users\\u\\AppData\\Local' },
      'win32',
      'C:\\Users\\u',
      'C:\\Users\\u\\AppData\\Local\\skills-mcp\\audit.db',
    ],
    [
      'home AppData on Windows',
      {},
      'win32',
      'C:\\Users\\u',
      'C:\\Users\\u\\AppData\\Local\\skills-mcp\\audit.db',
    ],
  ] as const)('uses %s', (_name, env, platform, home, expected) => {
    expect(defaultAuditPath({ env, platform, home })).toBe(expected);
  });
});
