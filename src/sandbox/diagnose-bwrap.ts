import { access, readFile } from 'node:fs/promises';
import type { Diagnosis } from './types.js';

/** Host facts that explain why bubblewrap cannot start (read once, at probe time). */
export interface HostFacts {
  /** /proc/sys/kernel/unprivileged_userns_clone (Debian), when present. */
  unprivilegedUsernsClone?: string;
  /** /proc/sys/user/max_user_namespaces. */
  maxUserNamespaces?: string;
  /** /proc/sys/kernel/apparmor_restrict_unprivileged_userns (Ubuntu 23.10+), when present. */
  apparmorRestrict?: string;
  /** Signs of running inside a container. */
  container?: string;
}

const read = (p: string) =>
  readFile(p, 'utf8').then(
    (s) => s.trim(),
    () => undefined,
  );

export async function readHostFacts(): Promise<HostFacts> {
  const facts: HostFacts = {};
  const clone = await read('/proc/sys/kernel/unprivileged_userns_clone');
  if (clone !== undefined) facts.unprivilegedUsernsClone = clone;
  const max = await read('/proc/sys/user/max_user_namespaces');
  if (max !== undefined) facts.maxUserNamespaces = max;
  const aa = await read('/proc/sys/kernel/apparmor_restrict_unprivileged_userns');
  if (aa !== undefined) facts.apparmorRestrict = aa;
  const exists = (p: string) =>
    access(p).then(
      () => true,
      () => false,
    );
  if (await exists('/.dockerenv')) facts.container = 'docker';
  else if (await exists('/run/.containerenv')) facts.container = 'podman';
  else {
    const cg = (await read('/proc/1/cgroup')) ?? '';
    if (/docker|kubepods|containerd|lxc/.test(cg)) facts.container = 'container';
  }
  return facts;
}

const tail = (s: string) => s.trim().split('\n').slice(-5).join('\n').slice(0, 800);

/** Turns a failed probe (bwrap's stderr) and host facts into a message with a fix. */
export function diagnoseBwrapFailure(stderr: string, facts: HostFacts): Diagnosis {
  const detail = tail(stderr);
  if (facts.maxUserNamespaces === '0' || facts.unprivilegedUsernsClone === '0') {
    return {
      code: 'userns-disabled',
      message: 'unprivileged user namespaces are disabled on this host',
      hint:
        facts.maxUserNamespaces === '0'
          ? 'sysctl -w user.max_user_namespaces=15000 (and persist it in /etc/sysctl.d/)'
          : 'sysctl -w kernel.unprivileged_userns_clone=1 (and persist it in /etc/sysctl.d/)',
      detail,
    };
  }
  if (facts.apparmorRestrict === '1' && /Permission denied|Operation not permitted/.test(stderr)) {
    return {
      code: 'apparmor-userns-restricted',
      message: 'AppArmor restricts unprivileged user namespaces (Ubuntu 23.10+)',
      hint: 'Install an AppArmor profile granting "userns," to /usr/bin/bwrap (Ubuntu ships one in apparmor-profiles: bwrap-userns-restrict), or sysctl -w kernel.apparmor_restrict_unprivileged_userns=0',
      detail,
    };
  }
  if (facts.container !== undefined && /namespace|mount|pivot_root|Operation not permitted/i.test(stderr)) {
    return {
      code: 'nested-container',
      message: `bubblewrap cannot create namespaces inside this ${facts.container} container`,
      hint: 'Run the container with a seccomp/AppArmor profile that allows user namespaces (e.g. --security-opt seccomp=unconfined --security-opt apparmor=unconfined), or run skills-mcp on the host. Setting sandbox: off is possible but removes all isolation.',
      detail,
    };
  }
  if (
    /No permissions to creating new namespace|setting up uid map|Creating new namespace failed/i.test(stderr)
  ) {
    return {
      code: 'userns-disabled',
      message: 'bubblewrap could not create a user namespace',
      hint: 'Check user.max_user_namespaces, kernel.unprivileged_userns_clone and any LSM (AppArmor, SELinux) policy for bwrap.',
      detail,
    };
  }
  if (/Failed to make \/ slave|mount|pivot_root/i.test(stderr)) {
    return {
      code: 'mount-denied',
      message: 'bubblewrap could not set up its mounts',
      hint: 'Usually a container or LSM policy forbids mount in new namespaces; run on the host or relax the policy.',
      detail,
    };
  }
  return { code: 'probe-failed', message: 'bubblewrap failed to run /bin/true', detail };
}
