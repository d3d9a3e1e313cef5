import type { Config } from '../config/config-schema.js';
import type { Logger } from '../log.js';
import { checkGitSource } from './check-git-source.js';
import { checkoutDir } from './git-checkout.js';

/**
 * The skills roots a reload reads: those of `config.skills` that are no git source's folder, and the folders of the
 * git sources whose checkout still matches its pin (checked again, every file hashed). A checkout changed since the
 * start is left out, with a warning, so what a running server serves of a git source stays the pinned commit.
 */
export function servedRoots(
  config: Config,
  sourcesDir: string,
  env: NodeJS.ProcessEnv,
  log: Logger,
): string[] {
  const gitRoots = new Set((config.git_roots ?? []).map((r) => r.root));
  if (gitRoots.size === 0) return [...config.skills];
  const ok = new Set<string>();
  for (const source of config.git_sources) {
    let why: string;
    try {
      const st = checkGitSource(source, checkoutDir(sourcesDir, source.git), env);
      if (st.state === 'ok') {
        ok.add(st.root);
        continue;
      }
      why = st.state === 'missing' ? 'it is gone' : st.why;
    } catch (e) {
      why = `it cannot be checked (${e instanceof Error ? e.message : String(e)})`;
    }
    log.warn(
      { source: source.git, why },
      'git source no longer served: its checkout changed since the start; run `skills-mcp sources update`, then restart',
    );
  }
  return config.skills.filter((r) => !gitRoots.has(r) || ok.has(r));
}
