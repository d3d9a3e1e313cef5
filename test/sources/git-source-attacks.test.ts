import { execFileSync, spawn } from 'node:child_process';
import {
  chmodSync,
  copyFileSync,
  cpSync,
  existsSync,
  mkdirSync,
  readFileSync,
  readdirSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { createServer, type AddressInfo, type Socket } from 'node:net';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { gitSourceCase, MAIN, pinned, skillMd } from '../helpers/git-source-case.js';
import { connectStdio } from '../helpers/stdio-client.js';
import { waitFor } from '../helpers/wait-for.js';
import { runCli } from '../helpers/run-cli.js';
import { runGit } from '../helpers/run-git.js';
import { builtCli, tempDir } from '../helpers/temp-dir.js';
import { textOf } from '../helpers/text-of.js';

const t = tempDir();
const setup = (label: string, entry: Parameters<typeof gitSourceCase>[2]) =>
  gitSourceCase(t.dir, label, entry);
afterAll(t.cleanup);

/** git run on a checkout as someone with write access to the state folder would. */
const inCheckout = (checkout: string, ...args: string[]) =>
  runGit(checkout, [`--git-dir=${join(checkout, '.git')}`, `--work-tree=${checkout}`, ...args]);

/** Commits a tree made by hand (names git's own add would refuse) on top of the repository's main. */
function commitTree(s: ReturnType<typeof setup>, entries: string): string {
  const tree = execFileSync('git', ['mktree'], { cwd: s.repo, input: entries, encoding: 'utf8' }).trim();
  return s.git('commit-tree', tree, '-m', 'crafted');
}

describe('pinned git sources under attack', () => {
  for (const flag of ['--skip-worktree', '--assume-unchanged']) {
    it(`refuses an edited file of the checkout that its index was told to overlook (${flag})`, () => {
      const s = setup(`flag${flag}`, (r) => pinned(r.url, r.first));
      expect(s.cli('list').code).toBe(0);
      const main = join(s.checkout(), 'skills', 'gitecho', 'scripts', 'main.py');
      writeFileSync(main, 'print("tampered")\n');
      inCheckout(s.checkout(), 'update-index', flag, 'skills/gitecho/scripts/main.py');
      const r = s.cli('list');
      expect(r.code, r.stdout).toBe(2);
      expect(r.stderr).toContain(`git source ${s.url}: not served`);
      expect(r.stderr).toContain('M skills/gitecho/scripts/main.py');
    });
  }

  it('refuses a checkout moved to another commit with its pin file rewritten to name that commit', () => {
    const s = setup('repinned', (r) => pinned(r.url, r.first));
    expect(s.cli('list').code).toBe(0);
    const second = s.commit('Not the pinned commit.');
    const checkout = s.checkout();
    inCheckout(checkout, 'fetch', '--quiet', '--depth=1', s.url, second);
    inCheckout(checkout, 'checkout', '--quiet', '--detach', second);
    const pin = `${checkout}.pin.json`;
    const was = JSON.parse(readFileSync(pin, 'utf8')) as { commit: string };
    writeFileSync(pin, JSON.stringify({ ...was, commit: second }));
    const r = s.cli('list');
    expect(r.code, r.stdout).toBe(2);
    expect(r.stderr).toContain(`git source ${s.url}: not served`);
    expect(r.stderr).toContain(s.first);
    expect(s.cli('sources', 'list').stdout).not.toMatch(/ {2}ok\n/);
  });

  it('refuses a checkout whose tree object was forged to match edited files, though git status finds it clean', () => {
    const s = setup('forged', (r) => pinned(r.url, r.first));
    expect(s.cli('list').code).toBe(0);
    const checkout = s.checkout();
    const tampered = s.commit('Forged content.');
    const objects = (dir: string) => join(dir, '.git', 'objects');
    // The fetch kept its objects as one pack: unpacked into loose objects, as an attacker may.
    const packs = join(objects(checkout), 'pack');
    for (const name of readdirSync(packs).filter((n) => n.endsWith('.pack'))) {
      const pack = readFileSync(join(packs, name));
      rmSync(join(packs, name));
      rmSync(join(packs, name.replace(/\.pack$/, '.idx')));
      execFileSync('git', [`--git-dir=${join(checkout, '.git')}`, 'unpack-objects', '-q'], { input: pack });
    }
    // Every object of the origin, then the pinned root tree's file replaced by the tampered commit's root tree.
    cpSync(objects(s.repo), objects(checkout), { recursive: true, force: false });
    const loose = (dir: string, id: string) => join(objects(dir), id.slice(0, 2), id.slice(2));
    const pinnedTree = s.git('rev-parse', `${s.first}:skills/gitecho`);
    chmodSync(loose(checkout, pinnedTree), 0o644);
    copyFileSync(
      loose(s.repo, s.git('rev-parse', `${tampered}:skills/gitecho`)),
      loose(checkout, pinnedTree),
    );
    inCheckout(checkout, 'read-tree', 'HEAD');
    inCheckout(checkout, 'checkout-index', '--force', '--all');
    expect(readFileSync(join(checkout, 'skills', 'gitecho', 'SKILL.md'), 'utf8')).toContain(
      'Forged content.',
    );
    expect(inCheckout(checkout, 'status', '--porcelain', '--ignored', '--untracked-files=all')).toBe('');
    const r = s.cli('list');
    expect(r.code, r.stdout).toBe(2);
    expect(r.stderr).toContain(`git source ${s.url}: not served`);
  });

  it('stops serving a git source whose checkout is edited while the server runs, naming the edit', async () => {
    const s = setup('live', (r) => pinned(r.url, r.first));
    expect(s.cli('list').code).toBe(0);
    const c = await connectStdio({ era: 'auto', args: ['--config', s.config, '--audit', s.auditPath] });
    try {
      const description = async () =>
        (await c.client.listTools()).tools.find((x) => x.name === 'gitecho')?.description ?? '';
      expect(await description()).toContain('Echoes from a pinned git commit.');
      writeFileSync(join(s.checkout(), 'skills', 'gitecho', 'SKILL.md'), skillMd('Edited in the checkout.'));
      await waitFor(
        () => c.stderr().includes('git source no longer served'),
        10_000,
        'the refusal of the edit',
      );
      expect(c.stderr()).toContain('M skills/gitecho/SKILL.md');
      expect((await c.client.listTools()).tools.map((x) => x.name)).not.toContain('gitecho');
    } finally {
      await c.close();
    }
  }, 60_000);

  it('refuses to run a script edited in the checkout after the start, hot reload off, naming the edit', async () => {
    const s = setup('liverun', (r) => pinned(r.url, r.first));
    expect(s.cli('list').code).toBe(0);
    const c = await connectStdio({
      era: 'auto',
      args: ['--config', s.config, '--audit', s.auditPath, '--no-watch'],
      capabilities: { elicitation: { form: {} } },
    });
    try {
      c.client.setRequestHandler('elicitation/create', () =>
        Promise.resolve({ action: 'accept', content: { decision: 'approved' } }),
      );
      expect((await c.client.listTools()).tools.map((x) => x.name)).toContain('gitecho');
      writeFileSync(join(s.checkout(), 'skills', 'gitecho', 'scripts', 'main.py'), 'print("tampered")\n');
      const r = await c.client.callTool({ name: 'gitecho', arguments: { text: 'hi' } });
      expect(JSON.stringify(r)).not.toContain('tampered');
      expect(r.isError).toBe(true);
      expect(textOf(r)).toContain("its git source's checkout changed since the start");
      expect(textOf(r)).toContain('M skills/gitecho/scripts/main.py');
    } finally {
      await c.close();
    }
  }, 60_000);

  it('runs no filter, hook or helper that the server environment or HOME config names while fetching and checking', () => {
    const s = setup('env', () => '');
    const marker = join(s.dir, 'pwned');
    writeFileSync(join(s.repo, '.gitattributes'), '* filter=evil diff=evil\n');
    const head = s.commit('With attributes.');
    s.write(pinned(s.url, head));
    const home = join(s.dir, 'home');
    mkdirSync(home);
    const evil = `[filter "evil"]\n\tsmudge = touch ${marker}\n\tclean = touch ${marker}\n[core]\n\tfsmonitor = touch ${marker}\n`;
    writeFileSync(join(home, '.gitconfig'), evil);
    const env = {
      HOME: home,
      GIT_CONFIG_COUNT: '1',
      GIT_CONFIG_KEY_0: 'filter.evil.smudge',
      GIT_CONFIG_VALUE_0: `touch ${marker}`,
      GIT_CONFIG_PARAMETERS: `'core.fsmonitor'='touch ${marker}'`,
      GIT_DIR: join(s.dir, 'nowhere'),
      GIT_EXEC_PATH: join(s.dir, 'nowhere'),
    };
    for (const command of [['list'], ['sources', 'list']]) {
      const r = runCli([...command, '--config', s.config], {
        cwd: s.dir,
        env: { ...env, SKILLS_MCP_AUDIT: s.auditPath },
      });
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout).toContain(command[0] === 'list' ? 'gitecho' : 'ok');
    }
    expect(existsSync(marker)).toBe(false);
  });

  it("serves the commit's files byte for byte, whatever attributes the server user's own git folder names", () => {
    const s = setup('attributes', (r) => pinned(r.url, r.first));
    const home = join(s.dir, 'home');
    mkdirSync(join(home, '.config', 'git'), { recursive: true });
    writeFileSync(join(home, '.config', 'git', 'attributes'), '* text eol=crlf\n');
    const r = runCli(['list', '--config', s.config], {
      cwd: s.dir,
      env: { HOME: home, SKILLS_MCP_AUDIT: s.auditPath },
    });
    expect(r.code, r.stderr).toBe(0);
    expect(readFileSync(join(s.checkout(), 'skills', 'gitecho', 'scripts', 'main.py'), 'utf8')).toBe(MAIN);
  });

  it('refuses a commit holding a .git or .GIT entry, and writes nothing it names', () => {
    const s = setup('dotgit', () => '');
    const marker = join(s.dir, 'pwned');
    const blob = execFileSync('git', ['hash-object', '-w', '--stdin'], {
      cwd: s.repo,
      input: `[core]\n\tfsmonitor = touch ${marker}\n`,
      encoding: 'utf8',
    }).trim();
    const inner = execFileSync('git', ['mktree'], {
      cwd: s.repo,
      input: `100644 blob ${blob}\tconfig\n`,
      encoding: 'utf8',
    }).trim();
    const skills = s.git('rev-parse', `${s.first}:skills`);
    for (const name of ['.git', '.GIT']) {
      const commit = commitTree(s, `040000 tree ${inner}\t${name}\n040000 tree ${skills}\tskills\n`);
      s.write(pinned(s.url, commit));
      const r = s.cli('list');
      expect(r.code, `${name}: ${r.stdout}`).toBe(2);
      expect(r.stderr).toContain(`git source ${s.url}`);
      expect(s.cli('list').code).toBe(2);
      expect(existsSync(marker)).toBe(false);
    }
  });

  it('refuses a path whose ancestor is a link in the commit', () => {
    const s = setup('linkpath', () => '');
    const skills = s.git('rev-parse', `${s.first}:skills`);
    const target = execFileSync('git', ['hash-object', '-w', '--stdin'], {
      cwd: s.repo,
      input: 'real',
      encoding: 'utf8',
    }).trim();
    const commit = commitTree(s, `040000 tree ${skills}\treal\n120000 blob ${target}\tskills\n`);
    s.write(pinned(s.url, commit, 'skills/gitecho'));
    const r = s.cli('list');
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('path skills/gitecho is not a folder');
  });

  it('refuses a checkout folder replaced by a link before the start', () => {
    const s = setup('swapped', (r) => pinned(r.url, r.first));
    expect(s.cli('list').code).toBe(0);
    const checkout = s.checkout();
    const elsewhere = join(s.dir, 'elsewhere');
    execFileSync('mv', [checkout, elsewhere]);
    symlinkSync(elsewhere, checkout);
    const r = s.cli('list');
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('is not a folder');
  });

  it('shows no terminal escape from a hostile file name in a refusal', () => {
    const s = setup('escape', (r) => pinned(r.url, r.first));
    symlinkSync('/etc/passwd', join(s.repo, 'skills', 'gitecho', '\u001b]0;owned\u0007x'));
    s.git('add', '-A');
    s.git('commit', '--quiet', '-m', 'escape');
    s.write(pinned(s.url, s.git('rev-parse', 'HEAD')));
    for (const command of [['list'], ['sources', 'update']]) {
      const r = s.cli(...command);
      expect(r.code, command.join(' ')).not.toBe(0);
      expect(r.stderr).toContain('links and submodules are not served');
      expect(r.stderr).not.toContain('\u001b');
    }
  });

  it('gives up on an ssh server that accepts the connection and never answers', async () => {
    const s = setup('stalled', () => '');
    const held: Socket[] = [];
    const server = createServer((socket) => void held.push(socket));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const port = (server.address() as AddressInfo).port;
      s.write(pinned(`ssh://git@127.0.0.1:${port}/skills.git`, s.first));
      const home = join(s.dir, 'home');
      mkdirSync(home);
      const started = Date.now();
      const r = await new Promise<{ code: number | null; stderr: string }>((resolve) => {
        const child = spawn(process.execPath, [builtCli, 'list', '--config', s.config], {
          cwd: s.dir,
          env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: home, SKILLS_MCP_AUDIT: s.auditPath },
          stdio: ['ignore', 'ignore', 'pipe'],
        });
        let stderr = '';
        child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
        child.on('close', (code) => resolve({ code, stderr }));
      });
      expect(r.code, r.stderr).toBe(2);
      expect(r.stderr).toContain('git fetch failed: Connection timed out during banner exchange');
      expect(Date.now() - started).toBeLessThan(45_000);
      expect(held.length).toBeGreaterThan(0);
    } finally {
      for (const socket of held) socket.destroy();
      await new Promise((resolve) => server.close(resolve));
    }
  }, 60_000);

  it('refuses an ssh URL whose host would pass for an ssh option, running nothing', () => {
    const s = setup('sshopt', () => '');
    const marker = join(s.dir, 'pwned');
    s.write(pinned(`"ssh://-oProxyCommand=touch%20${marker}/x"`, s.first));
    const r = s.cli('list');
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('git source ssh://-oProxyCommand');
    expect(existsSync(marker)).toBe(false);
  });
});
