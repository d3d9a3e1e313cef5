import { spawnSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parseTomlSubset } from '../helpers/parse-toml-subset.js';
import { runCli } from '../helpers/run-cli.js';
import { builtCli, tempDir } from '../helpers/temp-dir.js';

const LOCAL = 'http://127.0.0.1:3333/mcp';

/** Python's own TOML 1.0 parser (stdlib since 3.11), as a second reader of the Codex snippet when this host has it. */
const pythonToml = (text: string): unknown => {
  const r = spawnSync(
    'python3',
    ['-c', 'import json,sys,tomllib; print(json.dumps(tomllib.loads(sys.stdin.read())))'],
    {
      input: text,
      encoding: 'utf8',
    },
  );
  return r.status === 0 ? JSON.parse(r.stdout) : { error: r.error?.message ?? r.stderr };
};
const hasTomllib = spawnSync('python3', ['-c', 'import tomllib']).status === 0;

describe('skills-mcp config for Codex, Gemini CLI, Windsurf and Zed', () => {
  const t = tempDir();
  afterAll(t.cleanup);
  // A folder name TOML must escape: a quote, a backslash, a space, a non-ASCII letter.
  const skills = join(t.dir, 'my "skills" \\ é');
  mkdirSync(skills);

  it('gives Codex a [mcp_servers.<name>] table with command, args and required, read back by a strict TOML parser', () => {
    const r = runCli(['config', 'codex', '--skills', skills]);
    expect(r.code).toBe(0);
    expect(r.stderr).toContain('~/.codex/config.toml');
    const expected = {
      mcp_servers: {
        skills: { command: process.execPath, args: [builtCli, '--skills', skills], required: true },
      },
    };
    expect(parseTomlSubset(r.stdout)).toEqual(expected);
    if (hasTomllib) expect(pythonToml(r.stdout)).toEqual(expected);
  });

  it('gives Codex npx -y skills-mcp with --npx, under the --name given', () => {
    const r = runCli(['config', 'codex', '--npx', '--name', 'team', '--skills', skills]);
    expect(parseTomlSubset(r.stdout)).toEqual({
      mcp_servers: {
        team: { command: 'npx', args: ['-y', 'skills-mcp', '--skills', skills], required: true },
      },
    });
  });

  it('gives Codex a url and the environment variable its bearer token comes from, for a running server', () => {
    const r = runCli(['config', 'codex', '--http', LOCAL]);
    expect(r.code).toBe(0);
    expect(parseTomlSubset(r.stdout)).toEqual({
      mcp_servers: { skills: { url: LOCAL, bearer_token_env_var: 'SKILLS_MCP_TOKEN', required: true } },
    });
    expect(r.stderr).toContain('export SKILLS_MCP_TOKEN');
  });

  it.each([
    ['gemini', '~/.gemini/settings.json'],
    ['windsurf', '~/.codeium/windsurf/mcp_config.json'],
  ])('gives %s an mcpServers entry with command and args (and --npx)', (client, file) => {
    const r = runCli(['config', client, '--skills', skills]);
    expect(r.code).toBe(0);
    expect(r.stderr).toContain(file);
    expect(JSON.parse(r.stdout)).toEqual({
      mcpServers: { skills: { command: process.execPath, args: [builtCli, '--skills', skills] } },
    });
    expect(JSON.parse(runCli(['config', client, '--npx', '--skills', skills]).stdout)).toEqual({
      mcpServers: { skills: { command: 'npx', args: ['-y', 'skills-mcp', '--skills', skills] } },
    });
  });

  it('tells a Gemini CLI user that it shows no approval forms', () => {
    expect(runCli(['config', 'gemini', '--skills', skills]).stderr).toContain('shows no approval forms');
  });

  it('gives Zed a context_servers entry with command and args (and --npx)', () => {
    const r = runCli(['config', 'zed', '--skills', skills]);
    expect(r.code).toBe(0);
    expect(r.stderr).toContain('settings.json');
    expect(JSON.parse(r.stdout)).toEqual({
      context_servers: { skills: { command: process.execPath, args: [builtCli, '--skills', skills] } },
    });
    expect(JSON.parse(runCli(['config', 'zed', '--npx', '--skills', skills]).stdout)).toEqual({
      context_servers: { skills: { command: 'npx', args: ['-y', 'skills-mcp', '--skills', skills] } },
    });
  });

  it.each([
    ['gemini', { mcpServers: { skills: { httpUrl: LOCAL, headers: { Authorization: 'Bearer <token>' } } } }],
    [
      'windsurf',
      { mcpServers: { skills: { serverUrl: LOCAL, headers: { Authorization: 'Bearer <token>' } } } },
    ],
    ['zed', { context_servers: { skills: { url: LOCAL, headers: { Authorization: 'Bearer <token>' } } } }],
  ])('gives %s its own spelling of a Streamable HTTP entry with --http', (client, expected) => {
    const r = runCli(['config', client, '--http', LOCAL]);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual(expected);
    expect(r.stderr).toContain('Replace <token>');
  });

  it('reads TOML with a parser that refuses what TOML refuses', () => {
    expect(() => parseTomlSubset('a = "x\u0001"')).toThrow(/control character/);
    expect(() => parseTomlSubset('[t]\na = "1"\na = "2"')).toThrow(/defined twice/);
    expect(() => parseTomlSubset('a = "C:\\q"')).toThrow(/bad escape/);
    expect(() => parseTomlSubset('a = "x" y')).toThrow(/trailing text/);
  });

  it('names every client in config --help and in the refusal of an unknown one', () => {
    const help = runCli(['config', '--help']).stdout;
    const refusal = runCli(['config', 'emacs']).stderr;
    for (const c of [
      'claude-desktop',
      'cursor',
      'cline',
      'vscode',
      'claude-code',
      'codex',
      'gemini',
      'windsurf',
      'zed',
    ]) {
      expect(help).toContain(c);
      expect(refusal).toContain(c);
    }
  });
});
