import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { chmod, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runDoctor, type DoctorSandboxOptions } from '../../src/cli/doctor.js';
import type { CliIo } from '../../src/cli/io.js';
import { silentLogger } from '../../src/log.js';
import { createSandbox, readHostFacts, type HostFacts, type HostReaders } from '../../src/sandbox/index.js';
import { startInProcess } from '../helpers/in-process-server.js';
import { tempDirs } from './helpers.js';

// Why the sandbox cannot start, told apart cause by cause. bubblewrap is replaced by a stub that fails exactly as
// bubblewrap fails for that cause (its own error text), and /proc/sys by fake readers; everything else is real:
// the probe, `skills-mcp doctor`, and a gated call through the MCP server, its runner and its audit log.

const dirs = tempDirs();
afterAll(() => dirs.cleanup());

/** bubblewrap's own messages, as Debian 12's bubblewrap 0.8.0 prints them (the ENOSPC one seen from a real nested run). */
const BWRAP = {
  enospc:
    'bwrap: Creating new namespace failed: nesting depth or /proc/sys/user/max_*_namespaces exceeded (ENOSPC)',
  eperm:
    'bwrap: No permissions to create new namespace, likely because the kernel does not allow non-privileged user namespaces. See <https://deb.li/bubblewrap> or <file:///usr/share/doc/bubblewrap/README.Debian.gz>.',
  uidMap: 'bwrap: setting up uid map: Permission denied',
  slave: 'bwrap: Failed to make / slave: Permission denied',
  proc: "bwrap: Can't mount proc on /newroot/proc: Operation not permitted",
  hostname: "bwrap: Can't set hostname to sandbox: Operation not permitted",
};

const HOST: HostFacts = { maxUserNamespaces: '63766', unprivilegedUsernsClone: '1', distro: ['debian'] };

interface Cause {
  name: string;
  /** What the stub bwrap prints on stderr before exiting 1; undefined: no bwrap at all. */
  stderr?: string;
  facts: HostFacts;
  code: string;
  message: RegExp;
  fix: RegExp;
}

const CAUSES: Cause[] = [
  {
    name: 'bubblewrap is not installed',
    facts: HOST,
    code: 'bwrap-missing',
    message: /bubblewrap \(bwrap\) was not found/,
    fix: /Install it: sudo apt-get install bubblewrap\./,
  },
  {
    name: 'user.max_user_namespaces=0',
    stderr: BWRAP.enospc,
    facts: { ...HOST, maxUserNamespaces: '0' },
    code: 'userns-disabled',
    message: /user namespaces are turned off on this host \(user\.max_user_namespaces=0\)/,
    fix: /sudo sysctl -w user\.max_user_namespaces=15000/,
  },
  {
    name: 'kernel.unprivileged_userns_clone=0',
    stderr: BWRAP.eperm,
    facts: { ...HOST, unprivilegedUsernsClone: '0' },
    code: 'userns-disabled',
    message: /kernel\.unprivileged_userns_clone=0/,
    fix: /sudo sysctl -w kernel\.unprivileged_userns_clone=1/,
  },
  {
    name: 'Ubuntu 24.04 AppArmor restriction',
    stderr: BWRAP.uidMap,
    facts: { ...HOST, apparmorRestrict: '1', distro: ['ubuntu', 'debian'] },
    code: 'apparmor-userns-restricted',
    message:
      /AppArmor restricts unprivileged user namespaces .*kernel\.apparmor_restrict_unprivileged_userns=1/,
    fix: /profile bwrap \/\S+ flags=\(unconfined\) \{\\n {2}userns,\\n\}.*apparmor_parser -r \/etc\/apparmor\.d\/bwrap — or for every program: sudo sysctl -w kernel\.apparmor_restrict_unprivileged_userns=0/,
  },
  {
    name: 'Docker default seccomp profile',
    stderr: BWRAP.eperm,
    facts: { ...HOST, container: 'docker' },
    code: 'nested-container',
    message: /inside this Docker container: its seccomp profile \(or AppArmor\) refuses new user namespaces/,
    fix: /docker run --security-opt seccomp=unconfined --security-opt apparmor=unconfined --security-opt systempaths=unconfined/,
  },
  {
    name: 'Docker default AppArmor profile',
    stderr: BWRAP.slave,
    facts: { ...HOST, container: 'docker' },
    code: 'nested-container',
    message: /inside this Docker container: its AppArmor profile refuses the mounts/,
    fix: /--security-opt apparmor=unconfined/,
  },
  {
    name: 'Podman masked /proc',
    stderr: BWRAP.proc,
    facts: { ...HOST, container: 'podman' },
    code: 'nested-container',
    message: /inside this Podman container: \/proc is masked, so bubblewrap cannot mount its own/,
    fix: /podman run --security-opt unmask=ALL/,
  },
  {
    name: 'Podman default seccomp profile',
    stderr: BWRAP.hostname,
    facts: { ...HOST, container: 'podman' },
    code: 'nested-container',
    message: /inside this Podman container: its seccomp profile refuses the calls bubblewrap makes/,
    fix: /podman run --security-opt unmask=ALL --security-opt seccomp=unconfined/,
  },
  {
    name: 'Kubernetes pod',
    stderr: BWRAP.eperm,
    facts: { ...HOST, container: 'kubernetes' },
    code: 'nested-container',
    message: /inside this Kubernetes container/,
    fix: /hostUsers: false.*procMount: Unmasked.*seccompProfile: \{type: Unconfined\}.*appArmorProfile: \{type: Unconfined\}/,
  },
];

/** A stub bwrap (owned by this user, mode 755: as trusted as a real one) that fails the way a cause fails. */
async function stubBwrap(stderr: string): Promise<string> {
  const dir = await dirs.make('skills-mcp-stub-bwrap-');
  await chmod(dir, 0o755);
  const bwrap = join(dir, 'bwrap');
  await writeFile(bwrap, `#!/bin/sh\necho ${JSON.stringify(stderr).replace(/\$/g, '\\$')} >&2\nexit 1\n`);
  await chmod(bwrap, 0o755);
  return bwrap;
}

async function sandboxFor(c: Cause): Promise<DoctorSandboxOptions> {
  return {
    bwrapCandidates: [c.stderr === undefined ? '/nonexistent/bwrap' : await stubBwrap(c.stderr)],
    hostFacts: () => Promise.resolve(c.facts),
  };
}

function io(): CliIo & { stdout: () => string } {
  let out = '';
  return {
    out: (t) => (out += t),
    err: () => undefined,
    env: process.env,
    cwd: process.cwd(),
    stdinIsTTY: false,
    stdout: () => out,
  };
}

/** A real MCP client calling an executable skill through the real server, runner and audit log. */
async function gatedCall(options: DoctorSandboxOptions) {
  const root = await dirs.make('skills-mcp-diagnosis-');
  const skills = join(root, 'skills');
  const canary = join(root, 'ran');
  mkdirSync(join(skills, 'touch', 'scripts'), { recursive: true });
  writeFileSync(
    join(skills, 'touch', 'SKILL.md'),
    '---\nname: touch\ndescription: Creates a file. Use in tests.\nentry_point: scripts/main.sh\n---\n\nTouches.\n',
  );
  writeFileSync(join(skills, 'touch', 'scripts', 'main.sh'), `touch ${canary}\necho '{}'\n`);
  const server = startInProcess({
    skills: [skills],
    root,
    sandbox: createSandbox({ ...options, log: silentLogger(), env: process.env }),
  });
  try {
    const client = await server.connect('diagnosis-test');
    const result = await client.callTool({ name: 'touch', arguments: {} });
    return { result, ran: existsSync(canary) };
  } finally {
    await server.close();
  }
}

describe('why the sandbox cannot start: detected per cause, with the fix', () => {
  for (const c of CAUSES) {
    it(`doctor names "${c.name}" and prints the fix`, async () => {
      const json = io();
      expect(await runDoctor(['--json'], json, await sandboxFor(c))).toBe(1);
      const rep = JSON.parse(json.stdout());
      expect(rep.healthy).toBe(false);
      expect(rep.sandbox.diagnosis.code).toBe(c.code);
      if (c.stderr !== undefined) expect(rep.sandbox.diagnosis.detail).toBe(c.stderr);

      const text = io();
      expect(await runDoctor([], text, await sandboxFor(c))).toBe(1);
      expect(text.stdout()).toMatch(/^ {2}sandbox {7}bwrap.*: NOT AVAILABLE$/m);
      expect(text.stdout()).toMatch(new RegExp(`^ {2}diagnosis {5}${c.code}: .*${c.message.source}`, 'm'));
      expect(text.stdout()).toMatch(new RegExp(`^ {2}fix {11}.*${c.fix.source}`, 'm'));
      expect(text.stdout()).toMatch(
        /^ {2}effect {8}skill scripts are refused \(SANDBOX_DENIED\) until this is fixed$/m,
      );
    });

    it(`a gated call is refused for "${c.name}" with the cause and the fix, and nothing runs`, async () => {
      const { result, ran } = await gatedCall(await sandboxFor(c));
      expect(ran).toBe(false);
      expect(result.isError).toBe(true);
      expect(result._meta).toMatchObject({ 'skills-mcp/code': 'SANDBOX_DENIED' });
      const text = (result.content as Array<{ type: string; text: string }>)[0]!.text;
      expect(text).toMatch(new RegExp(`^no OS sandbox is available: .*${c.message.source}`));
      expect(text).toMatch(new RegExp(`\\nHint: .*${c.fix.source}.* Nothing was run\\.$`));
    });
  }

  it('a failure the host facts do not explain is reported as bubblewrap said it, not guessed', async () => {
    const c = io();
    const options = {
      bwrapCandidates: [await stubBwrap('bwrap: execvp /bin/true: No such file or directory')],
      hostFacts: () => Promise.resolve(HOST),
    };
    expect(await runDoctor(['--json'], c, options)).toBe(1);
    expect(JSON.parse(c.stdout()).sandbox.diagnosis).toMatchObject({
      code: 'probe-failed',
      detail: 'bwrap: execvp /bin/true: No such file or directory',
    });
  });

  it('a namespace limit reached with user namespaces allowed (nested in another sandbox) says so', async () => {
    const c = io();
    const options = {
      bwrapCandidates: [await stubBwrap(BWRAP.enospc)],
      hostFacts: () => Promise.resolve({ ...HOST, container: 'docker' as const }),
    };
    expect(await runDoctor([], c, options)).toBe(1);
    expect(c.stdout()).toMatch(/^ {2}diagnosis {5}userns-disabled: no user namespace can be created here/m);
    expect(c.stdout()).toMatch(
      /^ {2}fix {11}Run skills-mcp outside the sandbox or namespace it runs in now/m,
    );
  });

  it('a namespace refusal with user namespaces allowed and no container points at the security policy', async () => {
    const c = io();
    const options = {
      bwrapCandidates: [await stubBwrap(BWRAP.eperm)],
      hostFacts: () => Promise.resolve(HOST),
    };
    expect(await runDoctor([], c, options)).toBe(1);
    expect(c.stdout()).toMatch(
      /^ {2}fix {11}The sysctls allow user namespaces, so a security policy refuses them/m,
    );
  });
});

describe('host facts are read from /proc/sys, /etc/os-release and the container runtime signs', () => {
  const readers = (files: Record<string, string>): HostReaders => ({
    read: (p) => Promise.resolve(files[p]?.trim()),
    exists: (p) => Promise.resolve(p in files),
  });

  it('reads the user-namespace sysctls and the distribution', async () => {
    expect(
      await readHostFacts(
        readers({
          '/proc/sys/user/max_user_namespaces': '0\n',
          '/proc/sys/kernel/unprivileged_userns_clone': '1\n',
          '/proc/sys/kernel/apparmor_restrict_unprivileged_userns': '1\n',
          '/etc/os-release': 'PRETTY_NAME="Ubuntu 24.04 LTS"\nID=ubuntu\nID_LIKE=debian\n',
        }),
      ),
    ).toEqual({
      maxUserNamespaces: '0',
      unprivilegedUsernsClone: '1',
      apparmorRestrict: '1',
      distro: ['ubuntu', 'debian'],
    });
  });

  it.each([
    ['docker', { '/.dockerenv': '' }],
    ['podman', { '/run/.containerenv': '' }],
    ['kubernetes', { '/var/run/secrets/kubernetes.io': '', '/.dockerenv': '' }],
    ['kubernetes', { '/proc/1/cgroup': '0::/kubepods/besteffort/pod1234/abcd' }],
    ['lxc', { '/run/systemd/container': 'lxc' }],
    ['container', { '/run/systemd/container': 'systemd-nspawn' }],
    ['docker', { '/proc/1/cgroup': '12:pids:/docker/4f1c0ffee' }],
  ] as const)('tells a %s container by its signs', async (runtime, files) => {
    expect((await readHostFacts(readers(files))).container).toBe(runtime);
  });

  it('finds no container on a plain host', async () => {
    expect((await readHostFacts(readers({ '/proc/1/cgroup': '0::/init.scope' }))).container).toBeUndefined();
  });
});
