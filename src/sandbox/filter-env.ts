/**
 * Keeps the entries of `source` whose names a profile's `env.allow` admits (`NAME`, or `PREFIX*`).
 * The result is what a plan's `env` may contain besides the runner's own `SKILL_*` variables.
 */
export function filterEnv(source: NodeJS.ProcessEnv, allow: readonly string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(source)) {
    if (v === undefined) continue;
    if (allow.some((a) => a === k || (a.endsWith('*') && k.startsWith(a.slice(0, -1))))) out[k] = v;
  }
  return out;
}
