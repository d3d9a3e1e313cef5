import { readFile, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { parseDocument } from 'yaml';
import type * as z from 'zod';
import { SkillsError } from '../errors.js';
import { forbiddenMounts, readOnlyPathProblem } from './check-read-only-path.js';
import { packageRoot } from '../package-root.js';
import { PROFILE_NAME_RE, ProfileSchema, type Profile } from './profile-schema.js';

const MAX_PROFILE_BYTES = 64 * 1024;

/** The `sandbox-profiles/` folder shipped with the package. */
export function defaultProfilesDir(): string {
  return join(packageRoot(), 'sandbox-profiles');
}

/** Throws `SANDBOX_PROFILE_INVALID` unless `name` matches `^[a-z0-9-]+$` (so it cannot leave the folder). */
export function assertProfileName(name: string): void {
  if (!PROFILE_NAME_RE.test(name) || name.length > 64) {
    throw new SkillsError('SANDBOX_PROFILE_INVALID', `invalid sandbox profile name ${JSON.stringify(name)}`, {
      hint: 'Profile names match ^[a-z0-9-]+$ (for example default, network, strict).',
    });
  }
}

/** zod issues as `path: message` lines, the way config errors are reported everywhere. */
export function formatIssues(issues: readonly z.core.$ZodIssue[]): string[] {
  return issues.map((i) => `${i.path.length > 0 ? i.path.join('.') : '(root)'}: ${i.message}`);
}

/** Validates profile data already parsed from YAML (or built in code). */
export function parseProfile(name: string, data: unknown, source = name): Profile {
  assertProfileName(name);
  const parsed = ProfileSchema.safeParse(data);
  const pathLines = parsed.success ? readOnlyPathLines(parsed.data.readOnlyPaths, 'readOnlyPaths') : [];
  if (!parsed.success || pathLines.length > 0) {
    const lines = parsed.success ? pathLines : formatIssues(parsed.error.issues);
    throw new SkillsError(
      'SANDBOX_PROFILE_INVALID',
      `sandbox profile ${source} is invalid:\n${lines.join('\n')}`,
      {
        details: { profile: name, issues: lines },
      },
    );
  }
  return { ...parsed.data, name };
}

/** `key.N: why` for each path that cannot be mounted read-only. */
export function readOnlyPathLines(
  paths: readonly string[],
  key: string,
  o: { home?: string; serverPaths?: readonly string[] } = {},
): string[] {
  if (paths.length === 0) return [];
  const forbidden = forbiddenMounts(o);
  return paths.flatMap((p, i) => {
    const why = readOnlyPathProblem(p, forbidden);
    return why === undefined ? [] : [`${key}.${i}: ${JSON.stringify(p)} ${why}`];
  });
}

/** Loads and validates `<profilesDir>/<name>.yaml`. */
export async function loadProfile(profilesDir: string, name: string): Promise<Profile> {
  assertProfileName(name);
  const file = join(profilesDir, `${name}.yaml`);
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (cause) {
    throw new SkillsError('SANDBOX_PROFILE_INVALID', `sandbox profile ${name} not found`, {
      hint: `Create ${name}.yaml in the sandbox profiles folder, or use default, network or strict.`,
      cause,
    });
  }
  if (Buffer.byteLength(text) > MAX_PROFILE_BYTES) {
    throw new SkillsError('SANDBOX_PROFILE_INVALID', `sandbox profile ${name} is larger than 64 KiB`);
  }
  const doc = parseDocument(text, { prettyErrors: true, uniqueKeys: true });
  if (doc.errors.length > 0) {
    const lines = doc.errors.map((e) => e.message.split('\n')[0] ?? e.message);
    throw new SkillsError(
      'SANDBOX_PROFILE_INVALID',
      `sandbox profile ${name} is not valid YAML:\n${lines.join('\n')}`,
    );
  }
  return parseProfile(name, doc.toJS({ maxAliasCount: 10 }), `${name}.yaml`);
}

/** Names of the `*.yaml` profiles in a folder, sorted. */
export async function listProfiles(profilesDir: string): Promise<string[]> {
  const entries = await readdir(profilesDir).catch(() => [] as string[]);
  return entries
    .filter((f) => f.endsWith('.yaml'))
    .map((f) => f.slice(0, -'.yaml'.length))
    .filter((n) => PROFILE_NAME_RE.test(n))
    .sort();
}
