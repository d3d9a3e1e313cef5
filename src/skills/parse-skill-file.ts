import { isUtf8 } from 'node:buffer';
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
  const fail = failure(path);
  const text = decodeText(bytes);
  return text === undefined ? notText(fail) : parseText(text, fail, true)!;
}

/**
 * What the catalog needs of a SKILL.md: {@link parseSkillFile} without the body (`body` is ''). The same outcome,
 * findings included, for every file; for the common file (no BOM, no CR, flat frontmatter) only the bytes up to
 * the closing `---` line are decoded, so the catalog's strings hold on to the frontmatter, never to the whole file.
 */
export function parseSkillHead(bytes: Buffer, path: string): ParseOutcome {
  const fail = failure(path);
  const plain =
    !(bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf) && !bytes.includes(0x0d) && isText(bytes);
  const end = plain ? closingLineEnd(bytes) : undefined;
  const head = end === undefined ? undefined : parseText(decoder.decode(bytes.subarray(0, end)), fail, false);
  if (head !== undefined) return head;
  const whole = parseSkillFile(bytes, path);
  return whole.ok ? { ok: true, parsed: { ...whole.parsed, body: '' } } : whole;
}

const failure =
  (path: string) =>
  (rule: string, message: string, line?: number): ParseOutcome => ({
    ok: false,
    finding: { path, rule, severity: 'error', message, ...(line === undefined ? {} : { line }) },
  });

/** UTF-8 without NUL bytes: what a SKILL.md must be. */
const isText = (bytes: Uint8Array): boolean => !bytes.includes(0) && isUtf8(bytes);

const notText = (fail: ReturnType<typeof failure>) =>
  fail('not-text', 'the file is not UTF-8 text (binary content?); a SKILL.md must be markdown');

/** The text of a SKILL.md without a BOM and with LF line ends; undefined when it is not text. */
function decodeText(bytes: Uint8Array): string | undefined {
  let text: string;
  try {
    if (bytes.includes(0)) return undefined;
    text = decoder.decode(bytes);
  } catch {
    return undefined;
  }
  // Checked first, so the common file (no BOM, no CR) is not copied.
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
  if (text.includes('\r')) text = text.replace(/\r\n?/g, '\n');
  return text;
}

/**
 * Where the line that closes the frontmatter ends (after its newline), found as {@link CLOSING} finds it in the
 * decoded text: in UTF-8 the bytes of `\n`, `-`, space and tab never occur inside another character, so byte and
 * text positions of that match agree up to it. Undefined when there is none.
 */
function closingLineEnd(bytes: Buffer): number | undefined {
  for (let i = bytes.indexOf('\n---', 3); i !== -1; i = bytes.indexOf('\n---', i + 1)) {
    let j = i + 4;
    while (j < bytes.length && (bytes[j] === 0x20 || bytes[j] === 0x09)) j++;
    if (j === bytes.length) return j;
    if (bytes[j] === 0x0a) return j + 1;
  }
  return undefined;
}

/**
 * Parses decoded text. With `whole` false the text may end right after the closing line (a head): undefined then
 * when the frontmatter needs the full parser, which reads the whole file.
 */
function parseText(text: string, fail: ReturnType<typeof failure>, whole: boolean): ParseOutcome | undefined {
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
    return {
      ok: true,
      parsed: {
        frontmatter: flat,
        rawFrontmatter,
        body: whole ? text.slice(afterClose) : '',
        bodyLine: countLines(text.slice(0, afterClose)) + 1,
      },
    };
  }
  if (!whole) return undefined;
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
