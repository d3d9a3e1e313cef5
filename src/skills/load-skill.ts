import * as crypto from 'node:crypto';
import { existsSync, lstatSync, openSync } from 'node:fs';
import { extname, join, sep } from 'node:path';
import { isSkillsError } from '../errors.js';
import { folderStamp, isSettled, type FolderLoad } from './folder-load.js';
import { listSkillFiles } from './list-skill-files.js';
import { lineOfKey, parseSkillHead } from './parse-skill-file.js';
import { readSmallFile } from './read-small-file.js';
import { toolNameFor } from './tool-name.js';
import type { Finding, Skill, SkillCandidate, SkillFile } from './types.js';
import { validateFrontmatter } from './validate-frontmatter.js';

export const MAX_SKILL_MD_BYTES = 1024 * 1024;
/** Entry point extensions the runner knows how to start. */
export const RUNNABLE_EXTENSIONS: ReadonlySet<string> = new Set([
  '.py',
  '.js',
  '.mjs',
  '.cjs',
  '.sh',
  '.bash',
]);
const CONVENTIONAL_ENTRY = /^(scripts\/)?main\.(py|js|mjs|sh)$/;

/** The skill file of a folder: `SKILL.md`, else `skill.md`; undefined when neither exists. */
export function skillFileOf(dir: string): string | undefined {
  for (const name of ['SKILL.md', 'skill.md']) if (existsSync(`${dir}${sep}${name}`)) return name;
  return undefined;
}

export interface LoadSkillOptions {
  /** A buffer of at least {@link MAX_SKILL_MD_BYTES} to read into instead of allocating one per file. */
  scratch?: Buffer;
  /** Stamp what was read (one more lstat per folder), so a later load can reuse this one while it holds. */
  stamp?: boolean;
  /** The clock the stamps are judged by (see {@link isSettled}). */
  now?: () => number;
}

/**
 * Loads one candidate folder (`dir` a realpath). Never throws for a bad skill: a skill that cannot be served comes
 * back without `skill` and with the finding that says why. Without `skillFile`, the folder's own `SKILL.md` (else
 * `skill.md`) is opened; a folder with neither is no skill: nothing is loaded and nothing reported.
 */
export function loadSkill(c: SkillCandidate, opts: LoadSkillOptions = {}): FolderLoad {
  const { dir, root, folderName } = c;
  const startedMs = opts.stamp === true ? (opts.now ?? Date.now)() : 0;
  const top = opts.stamp === true ? lstatSync(dir) : undefined;
  const result = (
    r: Pick<FolderLoad, 'skill' | 'findings' | 'lint'>,
    stamps?: FolderLoad['stamps'],
    walked?: readonly string[],
  ): FolderLoad => ({
    dir,
    root,
    folderName,
    ...(c.skillFile === undefined ? {} : { knownFile: c.skillFile }),
    ...r,
    ...(stamps !== undefined && isSettled(stamps, startedMs)
      ? { stamps }
      : walked === undefined
        ? {}
        : { walked }),
  });
  const read = openSkillFile(dir, c.skillFile);
  const topStamps = (files: SkillFile[]) =>
    top === undefined ? undefined : { folders: [folderStamp('', top)], files };
  if (read === undefined) return result({ findings: [], lint: [] }, topStamps([]), TOP);
  const skillFile = read.name;
  const path = join(dir, skillFile);
  const { stats, bytes } = readSmallFile(read.fd, MAX_SKILL_MD_BYTES, opts.scratch);
  const skip = (finding: Finding): FolderLoad =>
    result(
      skipped(finding),
      topStamps([
        {
          path: skillFile,
          size: stats.size,
          mode: stats.mode & 0o777,
          mtimeMs: stats.mtimeMs,
          ctimeMs: stats.ctimeMs,
          ino: stats.ino,
        },
      ]),
      TOP,
    );
  const size = stats.size;
  if (bytes === undefined) {
    return skip({
      path,
      rule: 'too-large',
      severity: 'error',
      message: `${skillFile} is ${(size / 1048576).toFixed(1)} MiB; the limit is 1 MiB (move long material to references/)`,
    });
  }
  const parsed = parseSkillHead(bytes, path);
  if (!parsed.ok) return skip(parsed.finding);
  const { frontmatter, rawFrontmatter, bodyLine } = parsed.parsed;
  const v = validateFrontmatter(frontmatter, rawFrontmatter, folderName, path);
  if (v.fields === undefined) return skip(v.fatal!);
  const sha256 = skillFileSha256(bytes);

  let listing: ReturnType<typeof listSkillFiles>;
  try {
    // The skill file's fstat stands in for its lstat when the listing finds it a regular file (not a link).
    listing = listSkillFiles(dir, {
      known: { name: skillFile, stats },
      ...(top === undefined ? {} : { stamp: { top } }),
    });
  } catch (e) {
    if (!isSkillsError(e)) throw e;
    // Not stamped: the walk stopped part way.
    return result(
      skipped({
        path: dir,
        rule: 'too-many-files',
        severity: 'error',
        message: `${e.message}; ${e.hint ?? ''}`.trim(),
      }),
    );
  }
  const warnings = [...v.warnings, ...listing.findings];
  const lint = [...v.lint, ...listing.findings];
  const { entryPoint, problem } = pickEntryPoint(v.fields.entryPoint, listing.files);
  if (problem !== undefined) {
    const line = lineOfKey(rawFrontmatter, 'entry_point');
    const f: Finding = {
      path,
      ...(line === undefined ? {} : { line }),
      rule: problem.rule,
      severity: 'error',
      message: problem.message,
    };
    lint.push(f);
    warnings.push({ ...f, severity: 'warning' });
  }
  const { name, description, inputSchema, allowedTools, requests } = v.fields;
  const skill: Skill = {
    name,
    toolName: toolNameFor(name),
    description,
    dir,
    root,
    skillFile,
    skillFileSha256: sha256,
    bodyLine,
    frontmatter,
    kind: entryPoint === undefined ? 'instruction' : 'executable',
    allowedTools,
    requests,
    files: listing.files,
    warnings,
    ...(entryPoint === undefined ? {} : { entryPoint }),
    ...(inputSchema === undefined ? {} : { inputSchema }),
  };
  return result(
    { skill, findings: warnings, lint },
    listing.folders === undefined ? undefined : { folders: listing.folders, files: listing.files },
    listing.dirs,
  );
}

/** The folders a load that read no further than the skill file depends on: the skill folder's own entries. */
const TOP: readonly string[] = Object.freeze(['']);

const skipped = (finding: Finding) => ({ findings: [finding], lint: [finding] });

/**
 * Opens the skill file: `name` when given, else `SKILL.md`, else `skill.md`. Undefined when the file does not exist;
 * other errors (no permission) are thrown, as before.
 */
function openSkillFile(dir: string, name: string | undefined): { fd: number; name: string } | undefined {
  for (const candidate of name === undefined ? ['SKILL.md', 'skill.md'] : [name]) {
    try {
      return { fd: openSync(`${dir}${sep}${candidate}`, 'r'), name: candidate };
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      if (code !== 'ENOENT' && code !== 'ENOTDIR') throw e;
    }
  }
  return undefined;
}

/**
 * The digest a skill keeps of its skill file's bytes (see {@link Skill.skillFileSha256}). The one-shot `hash` (Node
 * 20.12 and later) costs a third less than a Hash object per file, which thousands of skills notice.
 */
export const skillFileSha256 = (bytes: Uint8Array): string =>
  typeof crypto.hash === 'function'
    ? crypto.hash('sha256', bytes, 'base64')
    : crypto.createHash('sha256').update(bytes).digest('base64');

function pickEntryPoint(
  declared: string | undefined,
  files: SkillFile[],
): { entryPoint?: string; problem?: { rule: string; message: string } } {
  if (declared === undefined) {
    const conventional = files.filter((f) => CONVENTIONAL_ENTRY.test(f.path));
    return conventional.length === 1 ? { entryPoint: conventional[0]!.path } : {};
  }
  const rel = declared.replace(/^\.\//, '');
  if (!files.some((f) => f.path === rel)) {
    return {
      problem: {
        rule: 'entry-point-missing',
        message: `entry_point "${declared}" is not a file of the skill; the skill is served as instructions only`,
      },
    };
  }
  if (!RUNNABLE_EXTENSIONS.has(extname(rel))) {
    return {
      problem: {
        rule: 'entry-point-runner',
        message: `entry_point "${declared}" has no known runner (use .py, .js, .mjs, .sh)`,
      },
    };
  }
  return { entryPoint: rel };
}
