import { isAbsolute, normalize } from 'node:path';
import { SkillsError } from '../errors.js';
import { isUnder } from './host-layout.js';
import type { SandboxPlan } from './types.js';

const ENV_KEY_RE = /^[A-Za-z_][A-Za-z0-9_]*$/;
/** Never mounted from the host: the sandbox builds its own. */
const FORBIDDEN_ROOTS = ['/proc', '/sys', '/dev'];

const fail = (why: string): never => {
  throw new SkillsError('SANDBOX_FAILED', `invalid sandbox plan: ${why}`);
};

/** An absolute, normalized path without NUL or newline. */
export function isCleanAbsolutePath(p: string): boolean {
  return isAbsolute(p) && normalize(p) === p && (p === '/' || !p.endsWith('/')) && !/[\0\n\r]/.test(p);
}

function checkPath(kind: string, p: string, systemDirs: readonly string[], write: boolean): void {
  if (!isCleanAbsolutePath(p)) fail(`${kind} ${JSON.stringify(p)} is not a clean absolute path`);
  if (p === '/' || isUnder(p, FORBIDDEN_ROOTS)) fail(`${kind} ${p} cannot be mounted`);
  if (write && isUnder(p, systemDirs)) fail(`${kind} ${p} is inside a read-only system folder`);
}

const positiveInt = (n: number) => Number.isInteger(n) && n > 0;

/** Rejects anything that could change the meaning of the bwrap options or the payload argv. */
export function validatePlan(plan: SandboxPlan, systemDirs: readonly string[] = ['/usr']): void {
  if (plan.argv.length === 0 || plan.argv[0] === '') fail('argv is empty');
  for (const a of plan.argv) if (typeof a !== 'string' || a.includes('\0')) fail('argv holds a NUL byte');
  checkPath('cwd', plan.cwd, systemDirs, false);
  for (const p of plan.readOnlyPaths) checkPath('read-only path', p, systemDirs, false);
  for (const p of plan.writablePaths) checkPath('writable path', p, systemDirs, true);
  if (plan.workspace !== undefined)
    checkPath('workspace', plan.workspace.path, systemDirs, plan.workspace.write);
  for (const [k, v] of Object.entries(plan.env)) {
    if (!ENV_KEY_RE.test(k)) fail(`env name ${JSON.stringify(k)} is not valid`);
    if (typeof v !== 'string' || v.includes('\0')) fail(`env ${k} holds a NUL byte`);
  }
  const l = plan.limits;
  for (const k of ['wallTimeMs', 'cpuSeconds', 'memoryMiB', 'pids', 'tmpfsMiB', 'fileSizeMiB'] as const) {
    if (!positiveInt(l[k])) fail(`limit ${k} must be a positive integer`);
  }
  if (!positiveInt(l.maxOutputBytes) || !positiveInt(l.openFiles))
    fail('output and file limits must be positive');
  if (plan.network !== 'none' && plan.network !== 'full') fail('network must be none or full');
  if (!/^[a-z0-9-]+$/.test(plan.profile)) fail('profile name is not valid');
}
