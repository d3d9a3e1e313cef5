import { discoverSkills } from './discover-skills.js';
import { loadSkill, MAX_SKILL_MD_BYTES } from './load-skill.js';
import type { Finding, Skill } from './types.js';

/** An immutable snapshot of the skills being served. Reloads produce a new one. */
export interface Catalog {
  readonly roots: readonly string[];
  /** Sorted by name. */
  readonly skills: readonly Skill[];
  /** Load warnings and reasons skills were skipped (what the server logs). */
  readonly findings: readonly Finding[];
  /** Everything lint reports, in discovery order. */
  readonly lint: readonly Finding[];
  get(name: string): Skill | undefined;
  byToolName(toolName: string): Skill | undefined;
}

/** Tool names the server itself uses; a skill whose tool name collides gets a hashed name instead. */
export const RESERVED_TOOL_NAMES: ReadonlySet<string> = new Set([
  'read_skill_file',
  'run_skill_script',
  'list_skills',
  'load_skill',
]);

/** Discovers and loads every skill under the roots. Never throws for bad skills: they are reported and skipped. */
export function loadCatalog(roots: readonly string[]): Catalog {
  const { candidates, findings: discoveryFindings } = discoverSkills(roots);
  const findings: Finding[] = [...discoveryFindings];
  const lint: Finding[] = [...discoveryFindings];
  const claims = new Map<string, Skill[]>();
  // Every SKILL.md is read into this one buffer and decoded from it: thousands of files allocate nothing for bytes.
  const scratch = Buffer.allocUnsafe(MAX_SKILL_MD_BYTES);
  for (const c of candidates) {
    const loaded = loadSkill(c.dir, c.root, c.folderName, c.skillFile, scratch);
    findings.push(...loaded.findings);
    lint.push(...loaded.lint);
    const skill = loaded.skill;
    if (skill === undefined) continue;
    const same = claims.get(skill.name);
    if (same === undefined) claims.set(skill.name, [skill]);
    else same.push(skill);
  }
  // A name is an identity: when two folders claim it (one root or several, at start or on reload), neither is
  // served until one is renamed, so a new folder can never take over another's name, rules or grants.
  const served: Skill[] = [];
  for (const [name, skills] of claims) {
    if (skills.length === 1) {
      served.push(skills[0]!);
      continue;
    }
    const where = skills.map((k) => k.dir).join(', ');
    for (const skill of skills) {
      const f: Finding = {
        path: `${skill.dir}/${skill.skillFile}`,
        rule: 'duplicate-name',
        severity: 'error',
        message: `skill name "${name}" is claimed by ${skills.length} folders (${where}); none is served until each has its own name`,
      };
      findings.push(f);
      lint.push(f);
    }
  }
  return createCatalog(roots, served, findings, lint);
}

export function createCatalog(
  roots: readonly string[],
  skills: Skill[],
  findings: Finding[],
  lint: Finding[],
): Catalog {
  const sorted = [...skills].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  const byName = new Map(sorted.map((s) => [s.name, s]));
  const byTool = new Map<string, Skill>();
  for (const s of sorted) {
    if (byTool.has(s.toolName) || RESERVED_TOOL_NAMES.has(s.toolName)) {
      s.toolName = uniqueName(s, byTool);
    }
    byTool.set(s.toolName, s);
  }
  return {
    roots,
    skills: sorted,
    findings,
    lint,
    get: (name) => byName.get(name),
    byToolName: (t) => byTool.get(t),
  };
}

function uniqueName(skill: Skill, taken: Map<string, Skill>): string {
  for (let i = 1; ; i++) {
    const suffix = `-${i}`;
    const candidate = `${skill.toolName.slice(0, 40 - suffix.length)}${suffix}`;
    if (!taken.has(candidate) && !RESERVED_TOOL_NAMES.has(candidate)) return candidate;
  }
}
