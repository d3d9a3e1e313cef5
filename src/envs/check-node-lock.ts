import { SkillsError } from '../errors.js';
import { isUnderRegistry } from './npm-registry.js';
import { redactUrl } from './pip-config.js';

/** Entries a lock may hold (a large project has a few thousand). */
const MAX_ENTRIES = 20_000;
/** One installed package: `node_modules/<name>`, nested under other packages' `node_modules`. */
const NAME = '(?:@[a-z0-9][a-z0-9._~-]{0,100}/)?[a-z0-9_][a-z0-9._~-]{0,213}';
const INSTALLED_PATH = new RegExp(`^node_modules/${NAME}(?:/node_modules/${NAME})*$`, 'i');
const SEMVER = /^\d{1,9}\.\d{1,9}\.\d{1,9}(?:-[0-9A-Za-z.-]{1,100})?(?:\+[0-9A-Za-z.-]{1,100})?$/;
/**
 * Registry ranges and dist-tags only: no URL, path, git, alias (`npm:`) or `file:`, and no leading dot (npm reads
 * `.`, `..` or `.x` as a folder path, not a range).
 */
export const NODE_RANGE = /^(?! *\.)[A-Za-z0-9 .*^~<>=|+-]{1,100}$/;
const DEP_FIELDS = ['dependencies', 'optionalDependencies', 'peerDependencies', 'devDependencies'];

/** A value of the lock, bounded, without credentials, as a JSON string (objects by their JSON). */
const show = (v: unknown) =>
  JSON.stringify(redactUrl(typeof v === 'string' ? v : (JSON.stringify(v) ?? 'undefined')).slice(0, 160));

const refuse = (what: string, registry: string) =>
  new SkillsError('ENV_SPEC_INVALID', `package-lock.json: ${what}`, {
    hint: `Regenerate the lock against the operator’s registry (\`npm install --package-lock-only --registry ${redactUrl(registry)}\`) with registry dependencies only, or delete package-lock.json.`,
  });

/**
 * Refuses a lock that would make `npm ci` fetch from anywhere but `registry`, or install anything but registry
 * packages: every entry must be an installed package path, not a link (`link: true`), with a plain version, a
 * `resolved` URL (when given, also for a bundled entry) under the registry, and registry ranges for the dependencies
 * it lists (npm resolves a dependency the lock lacks by that spec). Lock files of npm 6 and older (no `packages`) are
 * refused. Hostile input: values are bounded and shown as JSON strings without credentials.
 */
export function checkNodeLock(text: string, registry: string): void {
  let lock: unknown;
  try {
    lock = JSON.parse(text);
  } catch {
    throw refuse('is not valid JSON', registry);
  }
  const packages = (lock as { packages?: unknown } | null)?.packages;
  if (typeof packages !== 'object' || packages === null || Array.isArray(packages))
    throw refuse('has no "packages" (written by npm 6 or older)', registry);
  const entries = Object.entries(packages as Record<string, unknown>);
  if (entries.length > MAX_ENTRIES) throw refuse(`holds more than ${MAX_ENTRIES} entries`, registry);
  for (const [key, raw] of entries) {
    if (typeof raw !== 'object' || raw === null) throw refuse(`${show(key)} is not an object`, registry);
    const e = raw as Record<string, unknown>;
    for (const f of DEP_FIELDS) {
      const deps = e[f];
      if (deps === undefined) continue;
      if (typeof deps !== 'object' || deps === null)
        throw refuse(`${show(key)} ${f} is not an object`, registry);
      for (const [name, spec] of Object.entries(deps as Record<string, unknown>))
        if (typeof spec !== 'string' || !NODE_RANGE.test(spec))
          throw refuse(
            `${show(key)} depends on ${show(name)} at ${show(spec)}: not a registry version range`,
            registry,
          );
    }
    if (key === '') continue;
    if (e.link !== undefined && e.link !== false)
      throw refuse(`${show(key)} is a link (link: true) to ${show(e.resolved)}`, registry);
    if (!INSTALLED_PATH.test(key))
      throw refuse(`${show(key)} is not an installed package (a link target or workspace)`, registry);
    // A bundled entry (shipped in its parent's tarball) may lack a version; its `resolved` is checked all the same:
    // npm fetches it when no parent ships it (a top-level one is in the root's bundle, i.e. installed as usual).
    if (e.inBundle !== true && (typeof e.version !== 'string' || !SEMVER.test(e.version)))
      throw refuse(`${show(key)} has no plain version (${show(e.version)})`, registry);
    if (
      e.resolved !== undefined &&
      (typeof e.resolved !== 'string' || !isUnderRegistry(e.resolved, registry))
    )
      throw refuse(
        `${show(key)} resolves at ${show(e.resolved)}, not the operator’s npm registry (${redactUrl(registry)})`,
        registry,
      );
  }
}

/**
 * After npm ran: every package its hidden lock file (`node_modules/.package-lock.json`, written by npm for what it
 * installed) records must have come from `registry`, or be one of the vendored copies (`file:<vendorDir>/<n>`). npm
 * follows an `npm-shrinkwrap.json` shipped inside a registry package, whose entries may resolve anywhere: such an
 * environment is refused before it is sealed, so it never holds code from elsewhere. Throws ENV_INSTALL_FAILED.
 */
export function checkInstalledSources(text: string | undefined, registry: string, vendorDir: string): void {
  const fail = (what: string) =>
    new SkillsError('ENV_INSTALL_FAILED', `installing the skill environment failed (npm): ${what}`, {
      hint: `Nothing of it was kept. A package the skill depends on ships an npm-shrinkwrap.json naming another server than the operator’s npm registry (${redactUrl(registry)}): depend on a version without one, or vendor the package (file:vendor/…).`,
    });
  if (text === undefined)
    throw fail('npm left no record of what it installed (node_modules/.package-lock.json)');
  let packages: unknown;
  try {
    packages = (JSON.parse(text) as { packages?: unknown } | null)?.packages;
  } catch {
    throw fail('its record of what it installed is not valid JSON');
  }
  if (typeof packages !== 'object' || packages === null)
    throw fail('its record of what it installed has no packages');
  const vendored = new RegExp(`^file:${vendorDir.replace(/[.]/g, '\\.')}/\\d+(?:\\.tgz)?$`);
  for (const [key, raw] of Object.entries(packages as Record<string, unknown>)) {
    const e = (typeof raw === 'object' && raw !== null ? raw : {}) as Record<string, unknown>;
    if (e.link === true) throw fail(`it installed ${show(key)} as a link to ${show(e.resolved)}`);
    if (e.resolved === undefined) {
      // Fetched by name and version from the registry; a shrinkwrap's `version` may be a URL npm fetched instead.
      if (typeof e.version === 'string' ? !SEMVER.test(e.version) : e.inBundle !== true)
        throw fail(`it installed ${show(key)} at ${show(e.version)}, not a registry version`);
      continue;
    }
    if (
      typeof e.resolved !== 'string' ||
      !(isUnderRegistry(e.resolved, registry) || vendored.test(e.resolved))
    )
      throw fail(`it installed ${show(key)} from ${show(e.resolved)}, not the operator’s npm registry`);
  }
}
