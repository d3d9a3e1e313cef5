import { isAbsolute } from 'node:path';
import type { EnvResolver } from '../envs/create-env-resolver.js';
import { findMissing } from '../envs/explain-missing.js';
import { installedVersion } from '../envs/installed-version.js';
import type { SandboxPlan } from '../sandbox/types.js';
import type { Skill } from '../skills/types.js';

/**
 * For a Python run that found a package but not the submodule or name it imported (`from pypdf.annotations import
 * X` on an old pypdf), the installed version of that package: from the folders the run imported from, in order (its
 * PYTHONPATH: the skill copy, then its environment; then the interpreter's own `sys.path`), read from the
 * `*.dist-info` folder names only. Undefined for any other failure, or when the version cannot be told.
 */
export async function missingPackageVersion(
  stderr: string,
  plan: SandboxPlan,
  skill: Skill,
  envs: EnvResolver | undefined,
): Promise<string | undefined> {
  const m = findMissing(stderr);
  if (m?.kind !== 'python-module' || (m.submodule === undefined && m.name === undefined)) return undefined;
  const fromPlan = (plan.env.PYTHONPATH ?? '').split(':').filter(isAbsolute);
  const host = (await envs?.sitePackages(skill)) ?? [];
  return installedVersion(m.package, m.module, [...fromPlan, ...host])?.version;
}
