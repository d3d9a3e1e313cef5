import { DIRECTORY_MIME_TYPE, type DirectoryResource } from '@modelcontextprotocol/server/ext/skills';
import type { Skill } from '../../skills/types.js';
import { mimeTypeOf, skillUri } from '../skill-uri.js';

const ROOT = /^skill:\/\/([^/?#]+)(?:\/([^?#]*))?$/;

const decode = (s: string): string | undefined => {
  try {
    return decodeURIComponent(s);
  } catch {
    return undefined;
  }
};

/** The skill and folder (relative, '' for the root) a directory URI names; undefined for anything else. */
export function parseDirectoryUri(
  uri: string,
  skillOf: (name: string) => Skill | undefined,
): { skill: Skill; dir: string } | undefined {
  let href: string;
  try {
    href = new URL(uri).href;
  } catch {
    return undefined;
  }
  const m = ROOT.exec(href);
  const name = m?.[1] === undefined ? undefined : decode(m[1]);
  const skill = name === undefined ? undefined : skillOf(name);
  if (m === null || skill === undefined) return undefined;
  if (m[2] === undefined) return { skill, dir: '' };
  // Directory URIs have no trailing slash; every segment must be a real folder name.
  const parts = m[2].split('/').map(decode);
  if (parts.some((p) => p === undefined || p === '' || p === '.' || p === '..')) return undefined;
  const dir = parts.join('/');
  return skill.files.some((f) => f.path.startsWith(`${dir}/`)) ? { skill, dir } : undefined;
}

/** The direct children of a folder of a skill, sorted by URI; sub-folders carry `inode/directory`. */
export function directoryChildren(skill: Skill, dir: string): DirectoryResource[] {
  const prefix = dir === '' ? '' : `${dir}/`;
  const files: DirectoryResource[] = [];
  const folders = new Set<string>();
  for (const f of skill.files) {
    if (!f.path.startsWith(prefix)) continue;
    const rest = f.path.slice(prefix.length);
    const slash = rest.indexOf('/');
    if (slash === -1) {
      files.push({ uri: skillUri(skill.name, f.path), name: rest, mimeType: mimeTypeOf(rest), size: f.size });
    } else folders.add(rest.slice(0, slash));
  }
  const subdirs = [...folders].map((name) => ({
    uri: skillUri(skill.name, `${prefix}${name}`),
    name,
    mimeType: DIRECTORY_MIME_TYPE,
  }));
  return [...files, ...subdirs].sort((a, b) => (a.uri < b.uri ? -1 : a.uri > b.uri ? 1 : 0));
}
