import {
  ProtocolError,
  ProtocolErrorCode,
  ResourceNotFoundError,
  ResourceTemplate,
  type ReadResourceResult,
  type Resource,
} from '@modelcontextprotocol/server';
import { isSkillsError } from '../../errors.js';
import { readSkillContent, type SkillContent } from '../read-skill-content.js';
import type { ServerDeps } from '../server-deps.js';
import { skillFileMetadata } from '../skill-file-metadata.js';
import { MAX_RESOURCE_BYTES, SKILL_URI_TEMPLATE, mimeTypeOf, skillUri } from '../skill-uri.js';

/** Every file of every skill as `skill://<name>/<path>` (SKILL.md first), plus the template for direct reads. */
export function listSkillResources(deps: ServerDeps): Resource[] {
  const out: Resource[] = [];
  for (const s of deps.catalog().skills) {
    const files = [...s.files].sort(
      (a, b) => Number(b.path === s.skillFile) - Number(a.path === s.skillFile),
    );
    for (const f of files) {
      out.push({
        uri: skillUri(s.name, f.path),
        name: `${s.name}/${f.path}`,
        ...(f.path === s.skillFile
          ? instructionsMetadata(s.name, s.frontmatter.description, s.description)
          : skillFileMetadata(s, f)),
        mimeType: mimeTypeOf(f.path),
        size: f.size,
      });
    }
  }
  return out;
}

/** SKILL.md is named and described by its frontmatter, as the Skills extension asks (the description as written). */
const instructionsMetadata = (name: string, written: unknown, description: string) => ({
  name,
  title: `${name}: instructions`,
  description: typeof written === 'string' ? written : description,
});

const one = (v: string | string[] | undefined): string =>
  decodeURIComponent(Array.isArray(v) ? v.join('/') : (v ?? ''));

/** `checkRead` may refuse bytes before they are served (the Skills extension's digest check). */
export const skillFilesResource = (deps: ServerDeps, checkRead?: (content: SkillContent) => void) => ({
  name: 'skill-files',
  template: new ResourceTemplate(SKILL_URI_TEMPLATE, {
    list: () => ({ resources: listSkillResources(deps) }),
  }),
  config: {
    title: 'Skill files',
    description: 'A file of a skill: skill://<skill>/<path relative to the skill folder>.',
  },
  read: (uri: URL, vars: Record<string, string | string[]>): ReadResourceResult => {
    try {
      const c = readSkillContent(deps.catalog(), one(vars.skill), one(vars.path), MAX_RESOURCE_BYTES);
      checkRead?.(c);
      const base = { uri: uri.href, mimeType: c.mimeType };
      return { contents: [c.text !== undefined ? { ...base, text: c.text } : { ...base, blob: c.blob! }] };
    } catch (err) {
      if (!isSkillsError(err)) throw err;
      const msg = `${err.message}${err.hint === undefined ? '' : ` (${err.hint})`}`;
      if (err.code === 'FILE_TOO_LARGE') throw new ProtocolError(ProtocolErrorCode.InvalidParams, msg);
      throw new ResourceNotFoundError(uri.href, msg);
    }
  },
});
