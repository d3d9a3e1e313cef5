// Checks the system programs `npm start` (serve) and `npm test` (test) need, installs the missing ones when this
// user can (root, or `sudo -n`) with the system's package manager, and otherwise stops at once with one line per
// missing program and the command that installs it. A no-op, a few stat calls, when everything is present.
// Plain Node, no dependencies. Writes only to stderr: `npm start` serves MCP on stdout right after.
//
// Usage: node scripts/setup.mjs serve|test
// For this script's own tests only: SKILLS_MCP_SETUP_TEST_ROOT=DIR looks the programs up under DIR instead of /.
import { spawnSync } from 'node:child_process';
import { accessSync, constants, readdirSync, statSync } from 'node:fs';
import { delimiter, join } from 'node:path';

/**
 * What each job needs. `paths`: where the project looks for it (absolute, as the code and tests use them);
 * `packages`: its package per package manager.
 */
const PREREQUISITES = [
  {
    name: 'bubblewrap',
    why: 'the sandbox skill scripts run in',
    jobs: ['serve', 'test'],
    paths: ['/usr/bin/bwrap', '/usr/local/bin/bwrap'],
    packages: {
      apt: 'bubblewrap',
      dnf: 'bubblewrap',
      zypper: 'bubblewrap',
      pacman: 'bubblewrap',
      apk: 'bubblewrap',
    },
  },
  {
    name: 'setpriv',
    why: 'a root server runs the sandbox as uid 65534 through it',
    jobs: ['serve', 'test'],
    rootOnly: true,
    paths: ['/usr/bin/setpriv'],
    packages: {
      apt: 'util-linux',
      dnf: 'util-linux',
      zypper: 'util-linux',
      pacman: 'util-linux',
      apk: 'setpriv',
    },
  },
  {
    name: 'python3',
    why: 'the bundled skills and the sandbox tests run Python scripts',
    jobs: ['test'],
    paths: ['/usr/bin/python3'],
    packages: { apt: 'python3', dnf: 'python3', zypper: 'python3', pacman: 'python', apk: 'python3' },
  },
  {
    name: 'chromium',
    why: 'the approval console tests drive it',
    jobs: ['test'],
    paths: ['/usr/bin/chromium'],
    packages: { apt: 'chromium', dnf: 'chromium', zypper: 'chromium', pacman: 'chromium', apk: 'chromium' },
  },
  {
    name: 'libreoffice',
    why: 'a sandbox test converts a document with soffice --headless, as office skills do',
    jobs: ['test'],
    paths: ['/usr/bin/soffice'],
    packages: {
      apt: 'libreoffice-writer-nogui',
      dnf: 'libreoffice-writer',
      zypper: 'libreoffice-writer',
      pacman: 'libreoffice-fresh',
      apk: 'libreoffice-writer',
    },
  },
  {
    name: 'strace',
    why: 'one security case judges what the server itself opened',
    jobs: ['test'],
    paths: ['/usr/bin/strace'],
    packages: { apt: 'strace', dnf: 'strace', zypper: 'strace', pacman: 'strace', apk: 'strace' },
  },
  {
    name: 'script',
    why: 'gives `skills-mcp run` a terminal in CI',
    jobs: ['test'],
    paths: ['/usr/bin/script', '/bin/script'],
    packages: {
      apt: 'bsdutils',
      dnf: 'util-linux',
      zypper: 'util-linux',
      pacman: 'util-linux',
      apk: 'util-linux-misc',
    },
  },
  {
    name: 'postgresql',
    why: 'the PostgreSQL audit log tests start a server of their own in a temp folder',
    jobs: ['test'],
    // Debian and Ubuntu keep the server programs per major version; other systems put them on PATH.
    paths: ['/usr/lib/postgresql/*/bin/pg_ctl', '/usr/bin/pg_ctl'],
    packages: {
      apt: 'postgresql',
      dnf: 'postgresql-server',
      zypper: 'postgresql-server',
      pacman: 'postgresql',
      apk: 'postgresql',
    },
  },
  {
    name: 'haproxy',
    why: 'the team tests put three server processes behind it',
    jobs: ['test'],
    paths: ['/usr/sbin/haproxy', '/usr/bin/haproxy'],
    packages: { apt: 'haproxy', dnf: 'haproxy', zypper: 'haproxy', pacman: 'haproxy', apk: 'haproxy' },
  },
];

/** Package managers, in the order they are looked for on PATH, and how each installs without asking. */
const MANAGERS = [
  { id: 'apt', bin: 'apt-get', update: ['update'], install: ['install', '-y'], quiet: ['-qq'] },
  { id: 'dnf', bin: 'dnf', install: ['install', '-y'] },
  { id: 'zypper', bin: 'zypper', install: ['--non-interactive', 'install'] },
  { id: 'pacman', bin: 'pacman', install: ['-S', '--noconfirm', '--needed'] },
  { id: 'apk', bin: 'apk', install: ['add'] },
];

const say = (line) => process.stderr.write(`skills-mcp setup: ${line}\n`);

function isExecutable(file) {
  try {
    if (!statSync(file).isFile()) return false;
    accessSync(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** The first executable `name` on PATH, or undefined. */
function onPath(name, env) {
  for (const dir of (env.PATH ?? '').split(delimiter)) {
    if (dir !== '' && isExecutable(join(dir, name))) return join(dir, name);
  }
  return undefined;
}

/** Whether `path` (under `root`) is an executable file; one `*` segment matches any folder name there. */
function isPresent(root, path) {
  const star = path.indexOf('/*/');
  if (star === -1) return isExecutable(join(root, path));
  const parent = join(root, path.slice(0, star));
  let names;
  try {
    names = readdirSync(parent);
  } catch {
    return false;
  }
  return names.some((name) => isPresent(root, `${path.slice(0, star)}/${name}${path.slice(star + 2)}`));
}

function missingFor(job, root, isRoot) {
  return PREREQUISITES.filter(
    (p) =>
      p.jobs.includes(job) &&
      (p.rootOnly !== true || isRoot) &&
      !p.paths.some((path) => isPresent(root, path)),
  );
}

const quote = (args) =>
  args.map((a) => (/^[\w@%+=:,./-]+$/.test(a) ? a : `'${a.replace(/'/g, "'\\''")}'`)).join(' ');

function main(argv, env) {
  const job = argv[0];
  if (job !== 'serve' && job !== 'test') {
    say('usage: node scripts/setup.mjs serve|test');
    return 2;
  }
  // macOS has its sandbox (seatbelt) built in; other platforms have nothing this script could install.
  if (process.platform !== 'linux') return 0;
  const root = env.SKILLS_MCP_SETUP_TEST_ROOT ?? '/';
  const isRoot = process.getuid?.() === 0;
  const missing = missingFor(job, root, isRoot);
  if (missing.length === 0) return 0;

  const manager = MANAGERS.map((m) => ({ ...m, path: onPath(m.bin, env) })).find((m) => m.path !== undefined);
  if (manager === undefined) {
    say(
      `${missing.length} system prerequisite(s) missing and no known package manager (apt-get, dnf, zypper, pacman, apk) on PATH:`,
    );
    for (const p of missing)
      say(
        `  missing ${p.name} (${p.paths[0]}), ${p.why}: install the package "${p.packages.apt}" with your system's package manager`,
      );
    return 1;
  }
  const packages = [...new Set(missing.map((p) => p.packages[manager.id]))];
  const steps = [
    ...(manager.update === undefined ? [] : [[...manager.update]]),
    [...manager.install, ...(manager.quiet ?? []), ...packages],
  ];
  const sudo = isRoot ? undefined : onPath('sudo', env);
  // What a person types: the manager by name, without the quiet flag (through sudo when there is one).
  const bare = (args) => quote([manager.bin, ...args.filter((a) => !manager.quiet?.includes(a))]);
  const typed = (args) => (isRoot || sudo === undefined ? '' : 'sudo ') + bare(args);
  const canSudo =
    sudo !== undefined &&
    spawnSync(sudo, ['-n', 'true'], { env, stdio: 'ignore', timeout: 5_000 }).status === 0;
  if (!isRoot && !canSudo) {
    const why = sudo === undefined ? 'sudo is not installed' : '`sudo -n` is not allowed';
    say(`${missing.length} system prerequisite(s) missing; not root and ${why}, so nothing was installed:`);
    const fix = (p) =>
      sudo === undefined
        ? `as root, run  ${bare([...manager.install, p.packages[manager.id]])}`
        : `run  ${typed([...manager.install, p.packages[manager.id]])}`;
    for (const p of missing) say(`  missing ${p.name} (${p.paths[0]}), ${p.why}: ${fix(p)}`);
    const all = steps.map(bare).join(' && ');
    say(
      sudo === undefined
        ? `all at once, as root: ${all}  (or: su -c ${quote([all])})`
        : `all at once: ${steps.map(typed).join(' && ')}`,
    );
    return 1;
  }
  say(
    `installing ${packages.join(' ')} with ${manager.bin} (missing: ${missing.map((p) => p.name).join(', ')})`,
  );
  for (const step of steps) {
    // sudo resets the environment: the variable that keeps apt from asking questions goes through `env`.
    const argv = isRoot
      ? [manager.path, ...step]
      : [sudo, '-n', 'env', 'DEBIAN_FRONTEND=noninteractive', manager.path, ...step];
    say(`running: ${quote(argv)}`);
    const r = spawnSync(argv[0], argv.slice(1), {
      env: { ...env, DEBIAN_FRONTEND: 'noninteractive' },
      // stdout too goes to stderr: `npm start` speaks MCP on stdout once the server runs.
      stdio: ['ignore', 2, 2],
    });
    if (r.status !== 0) {
      say(`failed (${r.error?.message ?? `exit ${r.status ?? r.signal}`}): ${quote(argv)}`);
      say(`install by hand: ${steps.map(typed).join(' && ')}`);
      return 1;
    }
  }
  const still = missingFor(job, root, isRoot);
  if (still.length > 0) {
    for (const p of still)
      say(`  still missing after the install: ${p.name} (looked for ${p.paths.join(', ')})`);
    return 1;
  }
  say(`installed ${packages.join(' ')}`);
  return 0;
}

process.exitCode = main(process.argv.slice(2), process.env);
