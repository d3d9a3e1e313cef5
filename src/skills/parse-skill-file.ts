import { createRequire } from 'node:module';
import type { Finding } from './types.js';
import { parseFlatYaml } from './parse-flat-yaml.js';

export interface ParsedSkillFile {
  frontmatter: Record<string, unknown>;
  /** The raw frontmatter text (what follows the opening `---` up to the closing line), for locating keys. */
  rawFrontmatter: string;
  body: string;
  /** 1-based line where the body starts. */
  bodyLine: number;
}

export type ParseOutcome = { ok: true; parsed: ParsedSkillFile } | { ok: false; finding: Finding };

class RefusedEngine extends Error {}

type GrayMatter = (input: string, options: object) => { data: unknown; content: string; matter: string };
interface YamlModule {
  parse(text: string, options: object): unknown;
  YAMLParseError: new (...args: never[]) => Error & { linePos?: [{ line: number }] };
}

/**
 * The full parser, loaded on first need (most skills take the flat fast path, and start-up time matters):
 * gray-matter configured so frontmatter can never execute code — YAML goes to the `yaml` package, and every other
 * engine, including gray-matter's built-in `---js` / `---javascript` eval, throws. Passing options also keeps
 * gray-matter from caching by content, so reloads see the bytes on disk.
 */
function fullParser(): { matter: GrayMatter; yaml: YamlModule; options: object } {
  const require = createRequire(import.meta.url);
  const yaml = require('yaml') as YamlModule;
  const refuse = (language: string) => () => {
    throw new RefusedEngine(language);
  };
  const options = {
    language: 'yaml',
    engines: {
      yaml: (text: string): object => yaml.parse(text, { prettyErrors: true, maxAliasCount: 100 }) ?? {},
      javascript: refuse('javascript'),
      coffee: refuse('coffee'),
      json: refuse('json'),
      toml: refuse('toml'),
    },
  };
  return { matter: require('gray-matter') as GrayMatter, yaml, options };
}

const decoder = new TextDecoder('utf-8', { fatal: true });
const CLOSING = /\n---[ \t]*(?:\n|$)/g;

const countLines = (s: string): number => {
  let n = 0;
  for (let i = s.indexOf('\n'); i !== -1; i = s.indexOf('\n', i + 1)) n++;
  return n;
};

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
  // Checked first, so the common file (no BOM, no CR) is not copied.
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
  if (text.includes('\r')) text = text.replace(/\r\n?/g, '\n');
  if (!text.startsWith('---')) {
    return fail(
      'frontmatter-missing',
      'no YAML frontmatter: start the file with a --- block holding name and description',
      1,
    );
  }
  const firstEnd = text.indexOf('\n') === -1 ? text.length : text.indexOf('\n');
  const language = text.slice(3, firstEnd).trim();
  if (language !== '' && language.toLowerCase() !== 'yaml' && language.toLowerCase() !== 'yml') {
    return fail(
      'frontmatter-engine',
      `frontmatter language "${language}" is refused: only YAML frontmatter is read (never executed)`,
      1,
    );
  }
  CLOSING.lastIndex = 3;
  const close = CLOSING.exec(text);
  if (close === null) {
    return fail('frontmatter-yaml', 'the frontmatter is not closed: add a line holding only --- after it', 1);
  }
  const rawFrontmatter = text.slice(firstEnd, close.index);
  const afterClose = close.index + close[0].length;
  // Fast path: flat `key: text` frontmatter, split where gray-matter would split it too.
  const plainClose = close[0] === '\n---\n' || close[0] === '\n---';
  const flat =
    plainClose && text.indexOf('\n---', 3) === close.index ? parseFlatYaml(rawFrontmatter) : undefined;
  if (flat !== undefined) {
    const body = text.slice(afterClose);
    return {
      ok: true,
      parsed: {
        frontmatter: flat,
        rawFrontmatter,
        body,
        bodyLine: countLines(text.slice(0, afterClose)) + 1,
      },
    };
  }
  return parseWithGrayMatter(text, fail);
}

/** The full path (gray-matter + yaml) for any frontmatter; exported so tests can compare it with the fast path. */
export function parseWithGrayMatter(
  text: string,
  fail: (rule: string, message: string, line?: number) => ParseOutcome,
): ParseOutcome {
  const { matter, yaml, options } = fullParser();
  let file: ReturnType<GrayMatter>;
  try {
    file = matter(text, options);
  } catch (e) {
    if (e instanceof RefusedEngine) {
      return fail(
        'frontmatter-engine',
        `frontmatter language "${e.message}" is refused: only YAML is read`,
        1,
      );
    }
    if (e instanceof yaml.YAMLParseError) {
      const first = (e.message.split('\n')[0] ?? e.message).replace(/:\s*$/, '');
      return fail('frontmatter-yaml', `invalid YAML frontmatter: ${first}`, e.linePos?.[0]?.line);
    }
    return fail('frontmatter-yaml', `invalid frontmatter: ${e instanceof Error ? e.message : String(e)}`, 1);
  }
  const data = file.data;
  if (data === null || typeof data !== 'object' || Array.isArray(data)) {
    return fail('frontmatter-yaml', 'the frontmatter must be a YAML mapping (key: value lines)', 2);
  }
  const bodyLine = countLines(text) - countLines(file.content) + 1;
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
