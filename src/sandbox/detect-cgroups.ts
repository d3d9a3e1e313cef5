import { randomBytes } from 'node:crypto';
import { constants } from 'node:fs';
import { access, mkdir, readFile, rmdir } from 'node:fs/promises';
import { join } from 'node:path';

/**
 * Where the server may create per-run cgroups. Always nested under the server's own cgroup, so limits
 * set by whoever runs the server (a container, a CI job) keep applying to everything it starts.
 */
export type CgroupSupport =
  | { kind: 'v2'; dir: string }
  | { kind: 'v1'; memoryDir: string; pidsDir: string }
  | { kind: 'none'; reason: string };

interface Mount {
  point: string;
  fstype: string;
  superOptions: string[];
}

function parseMountinfo(text: string): Mount[] {
  const out: Mount[] = [];
  for (const line of text.split('\n')) {
    const [left, right] = line.split(' - ');
    if (left === undefined || right === undefined) continue;
    const point = left.split(' ')[4];
    const [fstype, , opts] = right.split(' ');
    if (point === undefined || fstype === undefined) continue;
    out.push({ point: point.replace(/\\040/g, ' '), fstype, superOptions: (opts ?? '').split(',') });
  }
  return out;
}

/** `/proc/self/cgroup` lines: `hierarchy-id:controllers:path`. */
function ownPaths(text: string): { v2?: string; byController: Map<string, string> } {
  const byController = new Map<string, string>();
  let v2: string | undefined;
  for (const line of text.trim().split('\n')) {
    const m = /^(\d+):([^:]*):(.*)$/.exec(line);
    if (m === null) continue;
    const [, id, ctrls = '', path = '/'] = m;
    if (id === '0' && ctrls === '') v2 = path;
    for (const c of ctrls.split(',')) if (c !== '') byController.set(c, path);
  }
  return v2 === undefined ? { byController } : { v2, byController };
}

async function canCreateChild(dir: string, files: string[]): Promise<boolean> {
  const probe = join(dir, `skills-mcp-probe-${randomBytes(6).toString('hex')}`);
  try {
    await access(dir, constants.W_OK);
    await mkdir(probe);
    for (const f of files) await access(join(probe, f), constants.W_OK);
    return true;
  } catch {
    return false;
  } finally {
    await rmdir(probe).catch(() => undefined);
  }
}

/** Detects the strongest cgroup layer this process may use: delegated v2, then v1 (as root), else none. */
export async function detectCgroups(procRoot = '/proc'): Promise<CgroupSupport> {
  let mounts: Mount[];
  let own: ReturnType<typeof ownPaths>;
  try {
    mounts = parseMountinfo(await readFile(join(procRoot, 'self/mountinfo'), 'utf8'));
    own = ownPaths(await readFile(join(procRoot, 'self/cgroup'), 'utf8'));
  } catch {
    return { kind: 'none', reason: 'cannot read /proc/self/cgroup' };
  }
  const v2Mount = mounts.find((m) => m.fstype === 'cgroup2');
  if (v2Mount !== undefined && own.v2 !== undefined) {
    const dir = join(v2Mount.point, own.v2);
    const subtree = await readFile(join(dir, 'cgroup.subtree_control'), 'utf8').catch(() => '');
    const enabled = subtree.trim().split(/\s+/);
    if (
      enabled.includes('memory') &&
      enabled.includes('pids') &&
      (await canCreateChild(dir, ['memory.max', 'pids.max', 'cgroup.procs']))
    ) {
      return { kind: 'v2', dir };
    }
  }
  const v1 = (ctrl: string) => {
    const m = mounts.find((x) => x.fstype === 'cgroup' && x.superOptions.includes(ctrl));
    const path = own.byController.get(ctrl);
    return m === undefined || path === undefined ? undefined : join(m.point, path);
  };
  const memoryDir = v1('memory');
  const pidsDir = v1('pids');
  if (memoryDir !== undefined && pidsDir !== undefined) {
    if (
      (await canCreateChild(memoryDir, ['memory.limit_in_bytes', 'cgroup.procs'])) &&
      (await canCreateChild(pidsDir, ['pids.max', 'cgroup.procs']))
    ) {
      return { kind: 'v1', memoryDir, pidsDir };
    }
    return { kind: 'none', reason: 'cgroup v1 is mounted but not writable (needs root)' };
  }
  return {
    kind: 'none',
    reason:
      v2Mount === undefined
        ? 'no cgroup v2 mount and no v1 memory+pids hierarchies'
        : 'cgroup v2 memory and pids controllers are not delegated to this process',
  };
}
