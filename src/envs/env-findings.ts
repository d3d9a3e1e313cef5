import { isSkillsError } from '../errors.js';
import type { Finding, Skill } from '../skills/types.js';
import { readEnvSpec, type EnvOverride, type EnvSpec } from './env-spec.js';
import { scanImports, undeclaredFinding, type UndeclaredImport } from './scan-imports.js';

/**
 * `lint`/`list` findings about a skill's dependencies: a declaration that cannot be installed (error `env-spec`),
 * and each third-party import no declaration covers (warning `undeclared-import`, with the declaration to add).
 */
export function envFindings(
  skill: Skill,
  override?: EnvOverride,
): { findings: Finding[]; spec?: EnvSpec; undeclared: UndeclaredImport[] } {
  let spec: EnvSpec;
  try {
    spec = readEnvSpec(skill.dir, skill.files, override);
  } catch (e) {
    if (!isSkillsError(e)) throw e;
    const finding: Finding = {
      path: `${skill.dir}/${skill.skillFile}`,
      rule: 'env-spec',
      severity: 'error',
      message: `${e.message}${e.hint === undefined ? '' : ` (${e.hint})`}`,
    };
    return { findings: [finding], undeclared: [] };
  }
  const undeclared = scanImports(skill.dir, skill.files, spec);
  return { findings: undeclared.map((u) => undeclaredFinding(skill.dir, skill.name, u)), spec, undeclared };
}
