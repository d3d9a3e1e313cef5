import { access, readFile } from 'node:fs/promises';
import type { Diagnosis } from './types.js';

/** Container runtimes told apart, each with its own way to let bubblewrap in. */
export type ContainerRuntime = 'docker' | 'podman' | 'kubernetes' | 'lxc' | 'container';

/** Host facts that explain why bubblewrap cannot start (read when a probe fails). */
export interface HostFacts {
  /** /proc/sys/kernel/unprivileged_userns_clone (Debian kernels), when present. */
  unprivilegedUsernsClone?: string;
  /** /proc/sys/user/max_user_namespaces. */
  maxUserNamespaces?: string;
  /** /proc/sys/kernel/apparmor_restrict_unprivileged_userns (Ubuntu 23.10+), when present. */
  apparmorRestrict?: string;
  /** The container runtime this process runs under, when there are signs of one. */
  container?: ContainerRuntime;
  /** `ID` and `ID_LIKE` of /etc/os-release, to name the package manager's command. */
  distro?: string[];
}

/** How host facts are read: the real files by default, fakes in tests. */
export interface HostReaders {
  /** The trimmed contents of a file, or undefined when it cannot be read. */
  read(path: string): Promise<string | undefined>;
  exists(path: string): Promise<boolean>;
}

export const fsReaders: HostReaders = {
  read: (p) =>
    readFile(p, 'utf8').then(
      (s) => s.trim(),
      () => undefined,
    ),
  exists: (p) =>
    access(p).then(
      () => true,
      () => false,
    ),
};

async function detectContainer(r: HostReaders): Promise<ContainerRuntime | undefined> {
  const cgroup = (await r.read('/proc/1/cgroup')) ?? '';
  if ((await r.exists('/var/run/secrets/kubernetes.io')) || /kubepods/.test(cgroup)) return 'kubernetes';
  if (await r.exists('/run/.containerenv')) return 'podman';
  if (await r.exists('/.dockerenv')) return 'docker';
  // systemd writes the runtime's name here when it starts inside one (docker, podman, lxc, systemd-nspawn, …).
  const named = await r.read('/run/systemd/container');
  if (named === 'docker' || named === 'podman' || named === 'lxc') return named;
  if (named !== undefined && named !== '') return 'container';
  if (/docker|containerd/.test(cgroup)) return 'docker';
  if (/lxc/.test(cgroup)) return 'lxc';
  return undefined;
}

export async function readHostFacts(r: HostReaders = fsReaders): Promise<HostFacts> {
  const facts: HostFacts = {};
  const clone = await r.read('/proc/sys/kernel/unprivileged_userns_clone');
  if (clone !== undefined) facts.unprivilegedUsernsClone = clone;
  const max = await r.read('/proc/sys/user/max_user_namespaces');
  if (max !== undefined) facts.maxUserNamespaces = max;
  const aa = await r.read('/proc/sys/kernel/apparmor_restrict_unprivileged_userns');
  if (aa !== undefined) facts.apparmorRestrict = aa;
  const container = await detectContainer(r);
  if (container !== undefined) facts.container = container;
  const os = await r.read('/etc/os-release');
  if (os !== undefined) {
    const field = (k: string) =>
      new RegExp(`^${k}="?([^"\\n]*)"?$`, 'm').exec(os)?.[1]?.split(/\s+/).filter(Boolean) ?? [];
    facts.distro = [...field('ID'), ...field('ID_LIKE')];
  }
  return facts;
}

/** The command that installs bubblewrap on this distribution, or one per family when it is unknown. */
function installCommand(distro: readonly string[] = []): string {
  const has = (...ids: string[]) => ids.some((id) => distro.includes(id));
  if (has('debian', 'ubuntu')) return 'sudo apt-get install bubblewrap';
  if (has('fedora', 'rhel', 'centos')) return 'sudo dnf install bubblewrap';
  if (has('suse', 'opensuse')) return 'sudo zypper install bubblewrap';
  if (has('arch')) return 'sudo pacman -S bubblewrap';
  if (has('alpine')) return 'sudo apk add bubblewrap';
  return 'sudo apt-get install bubblewrap (Debian/Ubuntu), sudo dnf install bubblewrap (Fedora), sudo pacman -S bubblewrap (Arch)';
}

export function diagnoseMissingBwrap(tried: readonly string[], facts: HostFacts): Diagnosis {
  return {
    code: 'bwrap-missing',
    message: 'bubblewrap (bwrap) was not found',
    hint: `Install it: ${installCommand(facts.distro)}. skills-mcp looks only in /usr/bin and /usr/local/bin.`,
    detail: tried.join('; '),
  };
}

/** The flags that let bubblewrap run inside each container runtime. */
export const CONTAINER_FIXES: Record<ContainerRuntime, string> = {
  docker:
    'start the container with `docker run --security-opt seccomp=unconfined --security-opt apparmor=unconfined --security-opt systempaths=unconfined …` (or a seccomp profile that allows clone, unshare, mount, pivot_root and setns instead of seccomp=unconfined)',
  podman:
    'start the container with `podman run --security-opt unmask=ALL --security-opt seccomp=unconfined …` (add `--security-opt label=type:spc_t` under SELinux)',
  kubernetes:
    'set `hostUsers: false` on the pod and, in the container securityContext, `procMount: Unmasked`, `seccompProfile: {type: Unconfined}` and `appArmorProfile: {type: Unconfined}` (needs pod user namespaces: Kubernetes 1.33+)',
  lxc: 'allow nesting in the container (`security.nesting=true` for LXD/Incus)',
  container:
    'let the container create user namespaces and mounts (unconfined seccomp and AppArmor, unmasked /proc)',
};
const RUNTIME_NAMES: Record<ContainerRuntime, string> = {
  docker: 'Docker',
  podman: 'Podman',
  kubernetes: 'Kubernetes',
  lxc: 'LXC',
  container: 'a',
};

const tail = (s: string) => s.trim().split('\n').slice(-5).join('\n').slice(0, 800);

/** bwrap could not create its namespaces: EPERM, ENOSPC (a zero limit) or EINVAL (no user namespaces at all). */
const NAMESPACE_REFUSED =
  /No permissions to creat(e|ing) new namespace|Creating new namespace failed|unshare failed|clone: Operation not permitted/i;
/** The namespace exists but writing its uid map was refused: what AppArmor's userns restriction does. */
const UID_MAP_REFUSED = /setting up uid map: (Permission denied|Operation not permitted)/i;
/** The mounts bwrap makes inside its namespace: AppArmor's `mount` rules, a masked /proc. */
const MOUNT_REFUSED = /Failed to make \/ slave|Can't mount proc|pivot_root|Failed to mount tmpfs|mount/i;
/** Inside its namespaces, a call the container's seccomp profile keeps for CAP_SYS_ADMIN (Podman's default). */
const SYSCALL_REFUSED = /Can't set hostname/i;

function containerDiagnosis(runtime: ContainerRuntime, stderr: string, detail: string): Diagnosis {
  const what = /Can't mount proc/i.test(stderr)
    ? '/proc is masked, so bubblewrap cannot mount its own'
    : SYSCALL_REFUSED.test(stderr)
      ? 'its seccomp profile refuses the calls bubblewrap makes in its namespaces (sethostname first)'
      : /Failed to make \/ slave|mount|pivot_root/i.test(stderr)
        ? 'its AppArmor profile refuses the mounts'
        : 'its seccomp profile (or AppArmor) refuses new user namespaces';
  const name = RUNTIME_NAMES[runtime];
  return {
    code: 'nested-container',
    message: `bubblewrap cannot set up its namespaces inside this ${name === 'a' ? '' : `${name} `}container: ${what}`,
    hint: `Run skills-mcp on the host, or ${CONTAINER_FIXES[runtime]}.`,
    detail,
  };
}

/**
 * Turns a failed probe (bwrap's stderr) and host facts into a cause and its fix. A cause is named only when
 * both agree: bwrap's own error says what it could not do, the host facts say why.
 */
export function diagnoseBwrapFailure(stderr: string, facts: HostFacts, bwrap = '/usr/bin/bwrap'): Diagnosis {
  const detail = tail(stderr);
  if (NAMESPACE_REFUSED.test(stderr)) {
    if (facts.maxUserNamespaces === '0') {
      return {
        code: 'userns-disabled',
        message: 'user namespaces are turned off on this host (user.max_user_namespaces=0)',
        hint: 'Allow them: sudo sysctl -w user.max_user_namespaces=15000, and keep it across reboots: echo user.max_user_namespaces=15000 | sudo tee /etc/sysctl.d/60-skills-mcp-userns.conf',
        detail,
      };
    }
    if (facts.unprivilegedUsernsClone === '0') {
      return {
        code: 'userns-disabled',
        message:
          'unprivileged user namespaces are turned off on this host (kernel.unprivileged_userns_clone=0)',
        hint: 'Allow them: sudo sysctl -w kernel.unprivileged_userns_clone=1, and keep it across reboots: echo kernel.unprivileged_userns_clone=1 | sudo tee /etc/sysctl.d/60-skills-mcp-userns.conf',
        detail,
      };
    }
    if (/ENOSPC|max_\*_namespaces exceeded/.test(stderr)) {
      return {
        code: 'userns-disabled',
        message:
          'no user namespace can be created here: the limit (user.max_user_namespaces) is reached for this process, as inside another sandbox',
        hint: 'Run skills-mcp outside the sandbox or namespace it runs in now, or raise the limit: sudo sysctl -w user.max_user_namespaces=15000',
        detail,
      };
    }
    if (facts.container !== undefined) return containerDiagnosis(facts.container, stderr, detail);
    return {
      code: 'userns-disabled',
      message: 'bubblewrap could not create a user namespace',
      hint: 'The sysctls allow user namespaces, so a security policy refuses them: check SELinux or AppArmor denials (journalctl -k | grep -i denied) for bwrap.',
      detail,
    };
  }
  if (UID_MAP_REFUSED.test(stderr) && facts.apparmorRestrict === '1') {
    return {
      code: 'apparmor-userns-restricted',
      message:
        'AppArmor restricts unprivileged user namespaces on this host (kernel.apparmor_restrict_unprivileged_userns=1, the default on Ubuntu 24.04)',
      hint: `Allow them for bubblewrap only with a profile: printf 'abi <abi/4.0>,\\ninclude <tunables/global>\\nprofile bwrap ${bwrap} flags=(unconfined) {\\n  userns,\\n}\\n' | sudo tee /etc/apparmor.d/bwrap && sudo apparmor_parser -r /etc/apparmor.d/bwrap — or for every program: sudo sysctl -w kernel.apparmor_restrict_unprivileged_userns=0`,
      detail,
    };
  }
  if (SYSCALL_REFUSED.test(stderr) && facts.container !== undefined)
    return containerDiagnosis(facts.container, stderr, detail);
  if (MOUNT_REFUSED.test(stderr) || UID_MAP_REFUSED.test(stderr)) {
    if (facts.container !== undefined) return containerDiagnosis(facts.container, stderr, detail);
    return {
      code: 'mount-denied',
      message: 'bubblewrap could not set up its mounts',
      hint: 'A security policy (SELinux, AppArmor) forbids mounts in new namespaces: check its denials for bwrap (journalctl -k | grep -i denied).',
      detail,
    };
  }
  return {
    code: 'probe-failed',
    message: 'bubblewrap failed to run /bin/true',
    hint: 'See the detail: it is bubblewrap’s own error.',
    detail,
  };
}
