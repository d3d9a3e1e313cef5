import type { DependenciesConfig } from '../config/dependencies-schema.js';

/** The interpreter used when `dependencies.python` is not set: the first `python3` on the server's PATH. */
export const DEFAULT_PYTHON = 'python3';

/**
 * The Python that builds a skill's environment, runs its Python scripts, and whose packages `use_host_packages`
 * looks at: `override` (a per-skill choice, when one is given), else `dependencies.python`, else `python3` from
 * the server's PATH. An absolute path is run as given (the sandbox mounts its install prefix read-only).
 */
export function pythonCommand(config: Pick<DependenciesConfig, 'python'>, override?: string): string {
  return override ?? config.python ?? DEFAULT_PYTHON;
}
