import { mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { runCli } from './run-cli.js';
import { runGit } from './run-git.js';

export const MAIN = 'import json, sys\nprint(json.dumps({"from": "git", "got": json.load(sys.stdin)}))\n';
export const skillMd = (description: string) =>
  `---\nname: gitecho\ndescription: ${description}\nentry_point: scripts/main.py\n---\n\ngitecho.\n`;

/** A repository in `dir/origin` made with the real git, its skill under `skills/gitecho`. */
export function makeRepo(dir: string) {
  const repo = join(dir, 'origin');
  const git = (...args: string[]) =>
    runGit(repo, ['-c', 'user.name=t', '-c', 'user.email=t@example.invalid', ...args]);
  mkdirSync(join(repo, 'skills', 'gitecho', 'scripts'), { recursive: true });
  git('init', '--quiet', '-b', 'main');
  const commit = (description: string): string => {
    writeFileSync(join(repo, 'skills', 'gitecho', 'SKILL.md'), skillMd(description));
    writeFileSync(join(repo, 'skills', 'gitecho', 'scripts', 'main.py'), MAIN);
    git('add', '-A');
    git('commit', '--quiet', '-m', description);
    return git('rev-parse', 'HEAD');
  };
  return { repo, url: `file://${repo}`, git, commit };
}

/**
 * A case folder under `base`: a repository at one commit, and a config naming it with `entry` lines; the state in
 * `data`.
 */
export function gitSourceCase(
  base: string,
  label: string,
  entry: (r: { url: string; first: string }) => string,
) {
  const dir = join(base, label);
  mkdirSync(dir, { recursive: true });
  const r = makeRepo(dir);
  const first = r.commit('Echoes from a pinned git commit. Use in tests.');
  const config = join(dir, 'skills-mcp.yaml');
  const write = (lines: string) =>
    writeFileSync(config, `skills:\n${lines}data_dir: ${join(dir, 'data')}\napproval:\n  mode: ask\n`);
  write(entry({ url: r.url, first }));
  const auditPath = join(dir, 'audit.db');
  const cli = (...args: string[]) =>
    runCli([...args, '--config', config], { cwd: dir, env: { SKILLS_MCP_AUDIT: auditPath } });
  const checkout = () => {
    const git = join(dir, 'data', 'sources', 'git');
    return join(
      git,
      readdirSync(git).find((n) => !n.endsWith('.json'))!,
    );
  };
  return { ...r, dir, first, config, auditPath, write, cli, checkout };
}

/** The `skills:` lines of one git entry. */
export const pinned = (url: string, ref: string, path = 'skills') =>
  `  - git: ${url}\n    ref: ${ref}\n    path: ${path}\n`;
