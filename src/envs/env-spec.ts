import { createHash } from 'node:crypto';
import { readFileSync, realpathSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { parse as parseToml } from './parse-pep723.js';
import { SkillsError } from '../errors.js';
import { hashBundle } from '../skills/bundle-hash.js';
import { isInside } from '../skills/list-skill-files.js';
import { checkNodeLock, NODE_RANGE } from './check-node-lock.js';
import { redactUrl } from './pip-config.js';
import { readTarball, TarballError } from './tarball-manifests.js';

/** Operator overrides for one skill (`dependencies.skills.<name>` in skills-mcp.yaml). */
export interface EnvOverride {
  python?: readonly string[] | undefined;
  node?: readonly string[] | undefined;
}

/** What a skill's environment holds, normalized: the same declarations always give the same spec. */
export interface EnvSpec {
  /** Python requirement lines (PEP 508), trimmed, de-duplicated, sorted. Empty: no Python packages. */
  python: string[];
  /** Node dependencies, name → version range, sorted by name. Empty: no Node packages. */
  node: Record<string, string>;
  /** sha256 of the skill's package-lock.json, when there is one (then installs follow it). */
  nodeLock?: string;
  /** sha256 of the content of each `file:` Node dependency (a tarball or folder of the skill), by its spec. */
  nodeFiles?: Record<string, string>;
  /** The operator's npm registry every Node package comes from (without credentials). */
  nodeRegistry?: string;
  /** Where the declarations came from (skill-relative paths, or `skills-mcp.yaml`). */
  sources: string[];
}

const MAX_BYTES = 256 * 1024;
/**
 * A named requirement: name, extras, version specifiers, an environment marker. No `@` (direct URL or path
 * references), no `:` or `/`, no backslash (pip joins continued lines), and no option (` -…`: pip honours some
 * options written after a requirement, e.g. `--global-option`), checked separately.
 */
const REQUIREMENT =
  /^[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?(?:\[[A-Za-z0-9._, -]*\])?[ ]*(?:[(<>=!~][A-Za-z0-9.*+!<>=~, ()_-]*)?(?:;[A-Za-z0-9_.<>=!~"' (),*+-]*)?$/;
/** npm package names (scoped or not). */
const NODE_NAME = /^(?:@[a-z0-9][a-z0-9._~-]{0,100}\/)?[a-z0-9_][a-z0-9._~-]{0,213}$/i;
/** A `file:` dependency: a relative path (checked to stay inside the skill). */
const FILE_PATH = /^[A-Za-z0-9_.-][A-Za-z0-9_./-]{0,199}$/;

/**
 * A declaration file of the skill, or undefined when absent or too big. Read only through the skill folder: a
 * link that leaves it (e.g. `requirements.txt -> /root/.ssh/id_rsa`) is refused, never read.
 */
export function readDeclaration(dir: string, rel: string, what: 'text'): string | undefined;
export function readDeclaration(dir: string, rel: string, what: 'bytes'): Buffer | undefined;
export function readDeclaration(
  dir: string,
  rel: string,
  what: 'text' | 'bytes',
): string | Buffer | undefined {
  let real: string;
  try {
    real = realpathSync(join(dir, rel));
  } catch {
    return undefined;
  }
  if (!isInside(realpathSync(dir), real)) {
    throw new SkillsError('ENV_SPEC_INVALID', `${rel} leaves the skill folder (a link); it is not read`, {
      hint: 'Declarations must be files of the skill itself.',
    });
  }
  if (!statSync(real).isFile()) return undefined;
  const buf = readFileSync(real);
  if (buf.length > MAX_BYTES) return undefined;
  return what === 'text' ? buf.toString('utf8') : buf;
}

const read = (dir: string, rel: string): string | undefined => readDeclaration(dir, rel, 'text');

const refuse = (where: string, line: string, why: string) =>
  new SkillsError('ENV_SPEC_INVALID', `${where}: "${line.slice(0, 120)}" ${why}`, {
    hint: 'List one package per line (e.g. `pypdf>=4`). Index, find-links and `-r`/`-e` options belong to the operator (pip configuration), not to a skill.',
  });

/** Requirement lines of a requirements.txt: comments and blank lines dropped; options refused. */
export function parseRequirements(text: string, where: string): string[] {
  const out: string[] = [];
  for (const raw of text.split(/\r?\n/)) {
    const line = raw.replace(/(^|\s)#.*$/, '').trim();
    if (line === '') continue;
    if (line.startsWith('-') || /\s-/.test(line))
      throw refuse(where, line, 'is or holds a pip option; only package requirements are read');
    if (/[@:/\\]/.test(line) || line.startsWith('.'))
      throw refuse(
        where,
        line,
        'is a URL or path; only named packages from the operator’s index are installed',
      );
    if (!REQUIREMENT.test(line)) throw refuse(where, line, 'is not a package requirement');
    out.push(line.replace(/\s+/g, ' '));
  }
  return out;
}

/** `dependencies` of a PEP 723 `# /// script` block, or undefined when the file has none. */
export function pep723Dependencies(source: string, where: string): string[] | undefined {
  const m = /^# \/\/\/ script\s*$([\s\S]*?)^# \/\/\/\s*$/m.exec(source);
  if (m === null) return undefined;
  const toml = (m[1] ?? '')
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => (l.startsWith('# ') ? l.slice(2) : l === '#' ? '' : l))
    .join('\n');
  const deps = parseToml(toml, where).dependencies ?? [];
  return parseRequirements(deps.join('\n'), where);
}

const refuseNode = (where: string, dep: string, why: string) =>
  new SkillsError('ENV_SPEC_INVALID', `${where}: "${dep.slice(0, 120)}" ${why}`, {
    hint: 'Declare registry packages by version range (`"left-pad": "^1.3.0"`), or vendor the package inside the skill folder (`"tiny": "file:vendor/tiny"`).',
  });

/** A Node dependency the skill may declare: a registry range, or `file:` a tarball or folder inside the skill. */
function checkNode(name: string, range: string, where: string): string {
  if (!NODE_NAME.test(name)) throw refuseNode(where, name, 'is not an npm package name');
  if (range.startsWith('file:')) {
    const p = range.slice('file:'.length);
    if (!FILE_PATH.test(p) || p.split('/').includes('..'))
      throw refuseNode(
        where,
        `${name}: ${range}`,
        'must be a path inside the skill folder (file:vendor/x.tgz)',
      );
    return range;
  }
  if (!NODE_RANGE.test(range))
    throw refuseNode(
      where,
      `${name}: ${range}`,
      'is not a version range; URLs, git, links, aliases and paths outside the skill are not installed',
    );
  return range;
}

const LOCKED_FIELDS = ['dependencies', 'optionalDependencies', 'devDependencies', 'peerDependencies'];

/**
 * The package.json `npm ci` is given with a lock: the skill's name, version and dependency fields only, every
 * dependency a registry range. npm resolves each of them while checking the lock against package.json (a URL in
 * `devDependencies` is fetched before npm reports the two out of sync), so all four fields are checked, not only
 * `dependencies`; `overrides` and `workspaces`, which name other specs and folders, are refused; the rest (scripts,
 * bundled dependencies, …) is left out.
 */
export function lockedManifest(text: string): string {
  let m: Record<string, unknown>;
  try {
    const parsed: unknown = JSON.parse(text);
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
      throw new Error('not an object');
    m = parsed as Record<string, unknown>;
  } catch (cause) {
    throw new SkillsError('ENV_SPEC_INVALID', 'package.json is not a JSON object', { cause });
  }
  for (const f of ['overrides', 'workspaces'])
    if (m[f] !== undefined)
      throw new SkillsError(
        'ENV_SPEC_INVALID',
        `package.json: ${f} with a package-lock.json are not installed`,
        {
          hint: `Remove \`${f}\` from package.json and regenerate the lock (\`npm install --package-lock-only\`): an environment holds registry packages and the skill's vendored ones only.`,
        },
      );
  const out: Record<string, unknown> = { private: true };
  if (typeof m.name === 'string' && NODE_NAME.test(m.name)) out.name = m.name;
  if (typeof m.version === 'string' && NODE_RANGE.test(m.version)) out.version = m.version;
  for (const f of LOCKED_FIELDS) {
    const deps = m[f];
    if (deps === undefined) continue;
    if (typeof deps !== 'object' || deps === null || Array.isArray(deps))
      throw new SkillsError('ENV_SPEC_INVALID', `package.json: ${f} is not an object`);
    const checked: Record<string, string> = {};
    for (const [k, v] of Object.entries(deps as Record<string, unknown>)) {
      if (typeof v !== 'string' || !NODE_NAME.test(k) || !NODE_RANGE.test(v))
        throw refuseNode(
          `package.json ${f}`,
          `${k}: ${String(v)}`,
          'is not a registry version range; with a package-lock.json every dependency field must hold registry ranges only',
        );
      checked[k] = v;
    }
    out[f] = checked;
  }
  const meta = m.peerDependenciesMeta;
  if (typeof meta === 'object' && meta !== null && !Array.isArray(meta))
    out.peerDependenciesMeta = Object.fromEntries(
      Object.entries(meta as Record<string, unknown>).map(([k, v]) => [
        k,
        { optional: (v as { optional?: unknown } | null)?.optional === true },
      ]),
    );
  return `${JSON.stringify(out, null, 2)}\n`;
}

/** Largest vendored tarball read (it is hashed, searched for its manifest and copied into the environment). */
export const MAX_TARBALL_BYTES = 64 * 1024 * 1024;

/** The real path of a `file:` dependency, refused when it does not exist or leaves the skill folder. */
export function fileDependencyPath(dir: string, rel: string): string {
  let real: string;
  try {
    real = realpathSync(join(dir, rel));
  } catch {
    throw new SkillsError('ENV_SPEC_INVALID', `package.json: file:${rel} does not exist`, {
      hint: 'Vendor the package inside the skill folder (a folder or an `npm pack` tarball) and name it by its path.',
    });
  }
  if (!isInside(realpathSync(dir), real))
    throw new SkillsError('ENV_SPEC_INVALID', `package.json: file:${rel} leaves the skill folder`, {
      hint: 'Copy the package into the skill folder (no link out of it): only the skill’s own files are installed.',
    });
  return real;
}

/**
 * A vendored package's own dependencies must be registry ranges too: npm installs them along with it, and a URL,
 * git or `file:` spec there would fetch from, or link to, anywhere.
 */
function checkVendoredManifest(text: string, where: string): void {
  let m: unknown;
  try {
    m = JSON.parse(text);
  } catch (cause) {
    throw new SkillsError('ENV_SPEC_INVALID', `${where} is not valid JSON`, { cause });
  }
  for (const f of ['dependencies', 'optionalDependencies', 'peerDependencies']) {
    const deps = (m as Record<string, unknown> | null)?.[f];
    if (deps === undefined) continue;
    if (typeof deps !== 'object' || deps === null)
      throw new SkillsError('ENV_SPEC_INVALID', `${where}: ${f} is not an object`);
    for (const [k, v] of Object.entries(deps as Record<string, unknown>))
      if (typeof v !== 'string' || !NODE_RANGE.test(v))
        throw new SkillsError(
          'ENV_SPEC_INVALID',
          `${where}: ${f} ${JSON.stringify(k.slice(0, 100))} is ${JSON.stringify(String(v).slice(0, 120))}, not a registry version range`,
          {
            hint: 'A vendored package may depend on registry packages only: vendor its dependencies too (file:vendor/…) in the skill’s own package.json.',
          },
        );
  }
}

/**
 * sha256 of a `file:` dependency's content (a tarball, or a folder hashed like a skill bundle), after checking the
 * dependencies its manifest declares.
 */
function fileDependencySha256(dir: string, rel: string): string {
  const real = fileDependencyPath(dir, rel);
  if (statSync(real).isDirectory()) {
    const manifest = readDeclaration(dir, join(rel, 'package.json'), 'text');
    if (manifest === undefined)
      throw new SkillsError('ENV_SPEC_INVALID', `package.json: file:${rel} has no package.json`);
    checkVendoredManifest(manifest, `${rel}/package.json`);
    return hashBundle(real).sha256;
  }
  if (statSync(real).size > MAX_TARBALL_BYTES)
    throw new SkillsError('ENV_SPEC_INVALID', `package.json: file:${rel} is larger than 64 MiB`);
  const data = readFileSync(real);
  for (const m of vendoredTarball(data, rel).manifests) checkVendoredManifest(m, `${rel} (package.json)`);
  return createHash('sha256').update(data).digest('hex');
}

/**
 * A vendored tarball read strictly (see `readTarball`): the manifests to check and the archive npm is given, or
 * ENV_SPEC_INVALID naming what in it is refused.
 */
export function vendoredTarball(data: Buffer, rel: string): ReturnType<typeof readTarball> {
  const hint = 'Vendor the output of `npm pack` (a gzipped tar holding package/package.json), unedited.';
  let t: ReturnType<typeof readTarball>;
  try {
    t = readTarball(data);
  } catch (cause) {
    if (!(cause instanceof TarballError)) throw cause;
    throw new SkillsError('ENV_SPEC_INVALID', `package.json: file:${rel} ${cause.message}`, { hint, cause });
  }
  if (t.manifests.length === 0)
    throw new SkillsError(
      'ENV_SPEC_INVALID',
      `package.json: file:${rel} is not a package tarball (no package/package.json)`,
      { hint },
    );
  return t;
}

const sortedUnique = (xs: readonly string[]) => [...new Set(xs)].sort();

/**
 * The environment a skill declares: `requirements.txt` (skill root or `scripts/`), PEP 723 blocks of its Python
 * scripts, `package.json` dependencies (+ `package-lock.json`), plus the operator's override. One environment per
 * skill: PEP 723 blocks of several scripts are merged. Throws ENV_SPEC_INVALID for declarations it will not install.
 */
export function readEnvSpec(
  dir: string,
  files: readonly { path: string }[],
  override: EnvOverride = {},
  sha256 = (s: string) => s,
  npmRegistry?: string,
): EnvSpec {
  const python: string[] = [];
  const sources: string[] = [];
  for (const rel of ['requirements.txt', 'scripts/requirements.txt']) {
    const text = read(dir, rel);
    if (text === undefined) continue;
    python.push(...parseRequirements(text, rel));
    sources.push(rel);
  }
  for (const f of files) {
    if (!f.path.endsWith('.py')) continue;
    const text = read(dir, f.path);
    if (text === undefined || !text.includes('# /// script')) continue;
    const deps = pep723Dependencies(text, f.path);
    if (deps === undefined) continue;
    python.push(...deps);
    sources.push(f.path);
  }
  const node: Record<string, string> = {};
  let nodeLock: string | undefined;
  const pkg = read(dir, 'package.json');
  if (pkg !== undefined) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(pkg);
    } catch (cause) {
      throw new SkillsError('ENV_SPEC_INVALID', 'package.json is not valid JSON', { cause });
    }
    const deps = (parsed as { dependencies?: unknown }).dependencies;
    if (typeof deps === 'object' && deps !== null) {
      for (const [k, v] of Object.entries(deps))
        if (typeof v === 'string') node[k] = checkNode(k, v, 'package.json');
      if (Object.keys(node).length > 0) sources.push('package.json');
      const lock = read(dir, 'package-lock.json');
      if (lock !== undefined && Object.keys(node).length > 0) {
        const vendored = Object.entries(node).find(([, v]) => v.startsWith('file:'));
        if (vendored !== undefined)
          throw new SkillsError(
            'ENV_SPEC_INVALID',
            `package.json: ${vendored[0]}: ${vendored[1]} with a package-lock.json (npm ci would link it, not copy it)`,
            {
              hint: 'Delete package-lock.json: without it, vendored packages are copied into the environment and registry packages installed by range.',
            },
          );
        lockedManifest(pkg);
        if (npmRegistry !== undefined) checkNodeLock(lock, npmRegistry);
        nodeLock = sha256(lock);
        sources.push('package-lock.json');
      }
    }
  }
  if (override.python !== undefined || override.node !== undefined) sources.push('skills-mcp.yaml');
  python.push(...parseRequirements((override.python ?? []).join('\n'), 'skills-mcp.yaml'));
  for (const n of override.node ?? []) {
    const at = n.lastIndexOf('@');
    if (at > 0) node[n.slice(0, at)] = checkNode(n.slice(0, at), n.slice(at + 1), 'skills-mcp.yaml');
    else node[n] = checkNode(n, '*', 'skills-mcp.yaml');
  }
  const sortedNode = Object.fromEntries(Object.entries(node).sort(([a], [b]) => (a < b ? -1 : 1)));
  // Two skills may both say `file:vendor/x.tgz`: the content, not the words, identifies the environment.
  const nodeFiles: Record<string, string> = {};
  for (const range of Object.values(sortedNode))
    if (range.startsWith('file:')) nodeFiles[range] = fileDependencySha256(dir, range.slice('file:'.length));
  return {
    python: sortedUnique(python),
    node: sortedNode,
    ...(nodeLock === undefined ? {} : { nodeLock }),
    ...(Object.keys(nodeFiles).length === 0 ? {} : { nodeFiles }),
    ...(npmRegistry === undefined || Object.keys(sortedNode).length === 0
      ? {}
      : { nodeRegistry: redactUrl(npmRegistry) }),
    sources,
  };
}

export const isEmptySpec = (s: EnvSpec): boolean => s.python.length === 0 && Object.keys(s.node).length === 0;
