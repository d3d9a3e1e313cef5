import { describe, expect, it } from 'vitest';
import { runClientConfig } from '../../src/cli/client-config.js';
import type { CliIo } from '../../src/cli/io.js';

const run = (args: string[]) => {
  let out = '';
  let err = '';
  const io: CliIo = {
    out: (t) => void (out += t),
    err: (t) => void (err += t),
    env: {},
    cwd: process.cwd(),
    stdinIsTTY: false,
  };
  const code = runClientConfig(args, io);
  return { code, out, err };
};

const LOCAL = 'http://127.0.0.1:3333/mcp';
const REMOTE = 'https://mcp.example.com/mcp';

describe('skills-mcp config <client> --http URL', () => {
  it('gives Cline a streamableHttp entry (a bare url means SSE there)', () => {
    const { code, out } = run(['cline', '--http', LOCAL]);
    expect(code).toBe(0);
    expect(JSON.parse(out)).toEqual({
      mcpServers: {
        skills: {
          type: 'streamableHttp',
          url: LOCAL,
          headers: { Authorization: 'Bearer <token>' },
          disabled: false,
          autoApprove: [],
        },
      },
    });
  });

  it('gives VS Code a servers entry of type http', () => {
    expect(JSON.parse(run(['vscode', '--http', LOCAL]).out)).toEqual({
      servers: { skills: { type: 'http', url: LOCAL, headers: { Authorization: 'Bearer <token>' } } },
    });
  });

  it.each(['cursor', 'claude-desktop'])('gives %s a url entry', (client) => {
    expect(JSON.parse(run([client, '--http', LOCAL, '--name', 'team']).out)).toEqual({
      mcpServers: { team: { url: LOCAL, headers: { Authorization: 'Bearer <token>' } } },
    });
  });

  it('gives Claude Code a claude mcp add --transport http command', () => {
    expect(run(['claude-code', '--http', LOCAL]).out.trim()).toBe(
      `claude mcp add --transport http skills ${LOCAL} --header 'Authorization: Bearer <token>'`,
    );
  });

  it('adds an Authorization header to fill in, for a remote URL as for loopback', () => {
    const cursor = run(['cursor', '--http', REMOTE]);
    expect(JSON.parse(cursor.out)).toEqual({
      mcpServers: { skills: { url: REMOTE, headers: { Authorization: 'Bearer <token>' } } },
    });
    expect(cursor.err).toContain('Replace <token>');
    expect(run(['claude-code', '--http', REMOTE]).out).toContain("--header 'Authorization: Bearer <token>'");
  });

  it('refuses a URL that is not http(s), and --skills with --http (exit 2)', () => {
    expect(run(['vscode', '--http', 'ftp://example.com/mcp']).code).toBe(2);
    expect(run(['vscode', '--http', 'not a url']).code).toBe(2);
    expect(run(['vscode', '--http', LOCAL, '--skills', 'x']).code).toBe(2);
  });
});
