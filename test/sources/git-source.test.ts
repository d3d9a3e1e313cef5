import { mkdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { gitSourceCase, pinned } from '../helpers/git-source-case.js';
import { runCli } from '../helpers/run-cli.js';
import { connectStdio } from '../helpers/stdio-client.js';
import { tempDir } from '../helpers/temp-dir.js';
import { textOf } from '../helpers/text-of.js';

const t = tempDir();
const setup = (label: string, entry: Parameters<typeof gitSourceCase>[2]) =>
  gitSourceCase(t.dir, label, entry);
afterAll(t.cleanup);

describe('pinned git skill sources', () => {
  it('serves a skill of a pinned commit over stdio and runs its script after an approval that names the source', async () => {
    const s = setup('served', (r) => pinned(r.url, r.first));
    const c = await connectStdio({
      era: 'auto',
      args: ['--config', s.config, '--audit', s.auditPath, '--no-watch'],
      capabilities: { elicitation: { form: {} } },
    });
    try {
      const asked: string[] = [];
      c.client.setRequestHandler('elicitation/create', (req) => {
        asked.push(String((req.params as { message?: unknown }).message));
        return Promise.resolve({ action: 'accept', content: { decision: 'approved' } });
      });
      const tools = await c.client.listTools();
      expect(tools.tools.map((x) => x.name)).toContain('gitecho');
      const r = await c.client.callTool({ name: 'gitecho', arguments: { text: 'hi' } });
      expect(textOf(r)).toContain('"from": "git"');
      expect(asked).toHaveLength(1);
      expect(asked[0]).toContain(`Source:  git ${s.url}@${s.first.slice(0, 12)}`);
      expect(c.errors).toEqual([]);
    } finally {
      await c.close();
    }
  }, 60_000);

  it('refuses a branch name as ref with a path: message, and serves the commit it names when allowed', () => {
    const s = setup('moving', (r) => pinned(r.url, 'main'));
    const refused = s.cli('list');
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(/skills\.0\.ref: "main" is a moving ref .*pin the full 40-hex commit id/);
    expect(refused.stderr).toContain('allow_moving_ref: true');
    s.write(`${pinned(s.url, 'main')}    allow_moving_ref: true\n`);
    const listed = s.cli('list');
    expect(listed.code, listed.stderr).toBe(0);
    expect(listed.stdout).toContain(`${s.url}@${s.first.slice(0, 12)}`);
    // A commit made on the branch since is not served: the ref was resolved once, when fetched.
    s.commit('A later commit on main.');
    expect(s.cli('sources', 'list').stdout).toContain(`${s.url}@${s.first} (main)  path skills  ok`);
  });

  it('refuses a path that climbs out of the repository', () => {
    const s = setup('climb', (r) => pinned(r.url, r.first, '../x'));
    const r = s.cli('list');
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/skills\.0\.path: must stay inside the repository \(no \.\.\)/);
  });

  it('refuses a URL scheme outside file, https and ssh', () => {
    const s = setup('ext', () => pinned('"ext::sh -c touch% /tmp/pwned"', 'a'.repeat(40)));
    const r = s.cli('list');
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/skills\.0\.git: must be a file:\/\/\/, https:\/\/ or ssh:\/\/ URL/);
  });

  it('refuses on the next start a checkout whose file was edited, naming the file and the command that fixes it', () => {
    const s = setup('tampered', (r) => pinned(r.url, r.first));
    expect(s.cli('list').code).toBe(0);
    writeFileSync(join(s.checkout(), 'skills', 'gitecho', 'scripts', 'main.py'), 'print("tampered")\n');
    for (const command of [['list'], ['serve', '--no-watch']]) {
      const r = s.cli(...command);
      expect(r.code, command[0]).toBe(2);
      expect(r.stderr).toContain(`git source ${s.url}: not served`);
      expect(r.stderr).toContain('M skills/gitecho/scripts/main.py');
      expect(r.stderr).toContain('Run `skills-mcp sources update`');
    }
    expect(s.cli('sources', 'list').stdout).toMatch(/path skills {2}changed: its files differ from commit/);
    expect(s.cli('sources', 'update').code).toBe(0);
    expect(s.cli('list').code).toBe(0);
  });

  it('refuses a file added to the checkout, even one its .gitignore names', () => {
    const s = setup('added', (r) => pinned(r.url, r.first));
    expect(s.cli('list').code).toBe(0);
    mkdirSync(join(s.checkout(), '.git', 'info'), { recursive: true });
    writeFileSync(join(s.checkout(), '.git', 'info', 'exclude'), 'extra.py\n');
    writeFileSync(join(s.checkout(), 'skills', 'gitecho', 'extra.py'), 'print(1)\n');
    const r = s.cli('list');
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('skills/gitecho/extra.py');
  });

  it('refuses a commit whose skills folder holds a link', () => {
    const s = setup('link', (r) => pinned(r.url, r.first));
    symlinkSync('/etc/passwd', join(s.repo, 'skills', 'gitecho', 'passwd'));
    s.git('add', '-A');
    s.git('commit', '--quiet', '-m', 'link');
    s.write(pinned(s.url, s.git('rev-parse', 'HEAD')));
    const r = s.cli('list');
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/links and submodules are not served, and skills holds skills\/gitecho\/passwd/);
  });

  it('does not fetch again on restart: serves with the origin repository gone', async () => {
    const s = setup('offline', (r) => pinned(r.url, r.first));
    expect(s.cli('list').code).toBe(0);
    rmSync(s.repo, { recursive: true, force: true });
    const c = await connectStdio({
      era: 'auto',
      args: ['--config', s.config, '--audit', s.auditPath, '--no-watch'],
    });
    try {
      expect((await c.client.listTools()).tools.map((x) => x.name)).toContain('gitecho');
    } finally {
      await c.close();
    }
  }, 60_000);

  it('sources update fetches a new pinned commit, which is then served, and audits the old and new commit', () => {
    const s = setup('update', (r) => pinned(r.url, r.first));
    expect(s.cli('list').code).toBe(0);
    const second = s.commit('Echoes from the second commit. Use in tests.');
    s.write(pinned(s.url, second));
    const stale = s.cli('list');
    expect(stale.code).toBe(2);
    expect(stale.stderr).toContain(`it was fetched at ${s.first}, and the configuration now names ${second}`);
    const updated = s.cli('sources', 'update');
    expect(updated.code, updated.stderr).toBe(0);
    expect(updated.stdout).toBe(`${s.url}: ${s.first.slice(0, 12)} -> ${second}\n`);
    const listed = s.cli('list', '--json');
    expect(listed.code, listed.stderr).toBe(0);
    const skills = (JSON.parse(listed.stdout) as { skills: { name: string; source: string }[] }).skills;
    expect(skills).toEqual([
      expect.objectContaining({ name: 'gitecho', source: `${s.url}@${second.slice(0, 12)}` }),
    ]);
    expect(s.cli('sources', 'list').stdout).toBe(`${s.url}@${second}  path skills  ok\n`);
    const events = runCli(['audit', 'export', '--jsonl', '--events-only', '--audit', s.auditPath])
      .stdout.split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as { type: string; payload: Record<string, unknown> });
    expect(events.filter((e) => e.type === 'source_updated').map((e) => e.payload)).toEqual([
      { url: s.url, path: 'skills', ref: second, old_commit: s.first, new_commit: second },
    ]);
    expect(runCli(['audit', 'verify', '--audit', s.auditPath]).code).toBe(0);
  });

  it('sources list shows each source as url@commit with its path and state', () => {
    const s = setup('listed', (r) => pinned(r.url, r.first));
    expect(s.cli('sources', 'list').stdout).toBe(`${s.url}@${s.first}  path skills  not fetched\n`);
    expect(s.cli('list').code).toBe(0);
    expect(s.cli('sources', 'list').stdout).toBe(`${s.url}@${s.first}  path skills  ok\n`);
  });
});
