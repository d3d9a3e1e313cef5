import type { Catalog } from '../../skills/catalog.js';
import type { Skill } from '../../skills/types.js';
import { MAX_RESOURCE_BYTES } from '../skill-uri.js';

/** The extension's skill name rule (Agent Skills): 1–64 of `[a-z0-9-]`, no leading, trailing or double hyphen. */
export const EXTENSION_NAME_PATTERN = /^(?!.*--)[a-z0-9]([a-z0-9-]{0,62}[a-z0-9])?$/;
/** What a server should not publish per skill (the extension's limits). */
export const EXTENSION_LIMITS = { files: 512, bytes: 16 * 1024 * 1024 };

export interface LeftOut {
  skill: Skill;
  reason: string;
}

export interface ServedSkills {
  /** Sorted by name, as the catalog is. */
  skills: readonly Skill[];
  byName: ReadonlyMap<string, Skill>;
  leftOut: readonly LeftOut[];
}

const codePoints = (s: string) => [...s].length;

const isJsonValue = (v: unknown): boolean => {
  if (v === null || typeof v === 'string' || typeof v === 'boolean') return true;
  if (typeof v === 'number') return Number.isFinite(v);
  if (Array.isArray(v)) return v.every(isJsonValue);
  if (typeof v !== 'object' || Object.getPrototypeOf(v) !== Object.prototype) return false;
  return Object.values(v).every(isJsonValue);
};

/**
 * Why a catalog skill cannot be published as an extension entry, or undefined when it can. Such a skill is still
 * served as tools, prompts and `skill://` resources; it is only absent from skills/list and skills/get.
 */
export function whyLeftOut(skill: Skill): string | undefined {
  const fm = skill.frontmatter;
  if (skill.skillFile !== 'SKILL.md')
    return `its skill file is ${skill.skillFile}; the extension serves SKILL.md only`;
  if (!EXTENSION_NAME_PATTERN.test(skill.name))
    return `name "${skill.name}" breaks the extension's name rule (1-64 of a-z, 0-9 and single hyphens)`;
  if (fm.name !== skill.name) return 'the frontmatter name is not written as a plain string';
  const description = fm.description;
  if (typeof description !== 'string' || description === '' || codePoints(description) > 1024)
    return 'the description must be a string of 1-1024 characters';
  const compatibility = fm.compatibility;
  if (
    compatibility !== undefined &&
    (typeof compatibility !== 'string' || compatibility === '' || codePoints(compatibility) > 500)
  )
    return 'compatibility must be a string of 1-500 characters';
  const metadata = fm.metadata;
  if (
    metadata !== undefined &&
    (typeof metadata !== 'object' ||
      metadata === null ||
      Array.isArray(metadata) ||
      !Object.values(metadata).every((x) => typeof x === 'string'))
  )
    return 'metadata must map strings to strings';
  if (!isJsonValue(fm)) return 'the frontmatter holds values JSON cannot carry as written';
  const bytes = skill.files.reduce((n, f) => n + f.size, 0);
  if (skill.files.length > EXTENSION_LIMITS.files || bytes > EXTENSION_LIMITS.bytes)
    return `${skill.files.length} files / ${bytes} bytes is over the extension's limits (${EXTENSION_LIMITS.files} files / 16 MiB)`;
  const big = skill.files.find((f) => f.size > MAX_RESOURCE_BYTES);
  if (big !== undefined)
    return `${big.path} is larger than resources/read serves (${MAX_RESOURCE_BYTES} bytes)`;
  return undefined;
}

/** Splits a catalog into the skills the extension publishes and those it leaves out (with the reason). */
export function servedSkills(catalog: Catalog): ServedSkills {
  const skills: Skill[] = [];
  const leftOut: LeftOut[] = [];
  for (const skill of catalog.skills) {
    const reason = whyLeftOut(skill);
    if (reason === undefined) skills.push(skill);
    else leftOut.push({ skill, reason });
  }
  return { skills, byName: new Map(skills.map((s) => [s.name, s])), leftOut };
}
