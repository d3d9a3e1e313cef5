import matter from 'gray-matter';
import { parse as parseYaml, YAMLParseError } from 'yaml';
import type { Finding } from './types.js';

export interface ParsedSkillFile {
  frontmatter: Record<string, unknown>;
  /** The raw frontmatter text, for locating keys by line. */
  rawFrontmatter: string;
  body: string;
  /** 1-based line where the body starts. */
  bodyLine: number;
}

export type ParseOutcome = { ok: true; parsed: ParsedSkillFile } | { ok: false; finding: Finding };

class RefusedEngine extends Error {}

const refuse = (language: string) => () => {
  throw new RefusedEngine(language);
};

/**
 * gray-matter configured so frontmatter can never execute code: YAML goes to the `yaml` package (no custom tags),
 * and every other engine — including gray-matter's built-in `---js` / `---javascript` eval — throws. Passing options
 * also keeps gray-matter from caching by content, so reloads see the bytes on disk.
 */
const MATTER_OPTIONS = {
  language: 'yaml',
  engines: {
    yaml: (text: string): object =>
      (parseYaml(text, { prettyErrors: true, maxAliasCount: 100 }) ?? {}) as object,
    javascript: refuse('javascript'),
    coffee: refuse('coffee'),
    json: refuse('json'),
    toml: refuse('toml'),
  },
};

const decoder = new TextDecoder('utf-8', { fatal: true });

/** Decodes and parses a SKILL.md. Never throws: a file that cannot be read as a skill gives one finding. */
export function parseSkillFile(bytes: Uint8Array, path: string): ParseOutcome {
  const fail = (rule: string, message: string, line?: number): ParseOutcome => ({
    ok: false,
    finding: { path, rule, severity: 'error', message, ...(line === undefined ? {} : { line }) },
  });
  let text: string;
  try {
    if (bytes.includes(0)) throw new Error('NUL byte');
    text = decoder.decode(bytes);
  } catch {
    return fail('not-text', 'the file is not UTF-8 text (binary content?); a SKILL.md must be markdown');
  }
  text = text.replace(/^\uFEFF/, '').replace(/\r\n?/g, '\n');
  if (!text.startsWith('---')) {
    return fail(
      'frontmatter-missing',
      'no YAML frontmatter: start the file with a --- block holding name and description',
      1,
    );
  }
  const firstLine = text.slice(0, text.indexOf('\n') === -1 ? text.length : text.indexOf('\n'));
  const language = firstLine.slice(3).trim();
  if (language !== '' && language.toLowerCase() !== 'yaml' && language.toLowerCase() !== 'yml') {
    return fail(
      'frontmatter-engine',
      `frontmatter language "${language}" is refused: only YAML frontmatter is read (never executed)`,
      1,
    );
  }
  if (!/\n---[ \t]*(\n|$)/.test(text.slice(3))) {
    return fail('frontmatter-yaml', 'the frontmatter is not closed: add a line holding only --- after it', 1);
  }
  let file: matter.GrayMatterFile<string>;
  try {
    file = matter(text, MATTER_OPTIONS as unknown as Parameters<typeof matter>[1]);
  } catch (e) {
    if (e instanceof RefusedEngine) {
      return fail(
        'frontmatter-engine',
        `frontmatter language "${e.message}" is refused: only YAML is read`,
        1,
      );
    }
    if (e instanceof YAMLParseError) {
      const line = e.linePos?.[0]?.line;
      const first = (e.message.split('\n')[0] ?? e.message).replace(/:\s*$/, '');
      return fail('frontmatter-yaml', `invalid YAML frontmatter: ${first}`, line);
    }
    return fail('frontmatter-yaml', `invalid frontmatter: ${e instanceof Error ? e.message : String(e)}`, 1);
  }
  const data: unknown = file.data;
  if (data === null || typeof data !== 'object' || Array.isArray(data)) {
    return fail('frontmatter-yaml', 'the frontmatter must be a YAML mapping (key: value lines)', 2);
  }
  const bodyLine = text.split('\n').length - file.content.split('\n').length + 1;
  return {
    ok: true,
    parsed: {
      frontmatter: data as Record<string, unknown>,
      rawFrontmatter: file.matter,
      body: file.content,
      bodyLine,
    },
  };
}

/** 1-based line of a top-level key in the raw frontmatter (the `---` line is line 1). */
export function lineOfKey(rawFrontmatter: string, key: string): number | undefined {
  const lines = rawFrontmatter.split('\n');
  const re = new RegExp(`^${key.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\s*:`);
  const i = lines.findIndex((l) => re.test(l));
  // rawFrontmatter starts right after the opening `---`, so its first element is the rest of line 1.
  return i === -1 ? undefined : i + 1;
}
