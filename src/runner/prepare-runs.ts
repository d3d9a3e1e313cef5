import { interpreterForScript } from '../sandbox/resolve-interpreter.js';
import type { RunnerDeps } from './runner-types.js';

/** The most interpreters found ahead of the first run (a catalog names a handful: python3, node, bash). */
const MAX_INTERPRETERS = 8;

/**
 * The one-time work of a server's first run, done ahead of it: opens the audit log, probes the sandbox (which also
 * spawns its first launcher) and finds the interpreters the catalog's executable skills start with. Each step is
 * shared with the run that needs it (opened once), so a run that comes first waits only for what is not done yet.
 * Never rejects: a step that fails is logged and left to the run, which reports it as it always did.
 */
export async function prepareRuns(
  deps: Pick<RunnerDeps, 'audit' | 'sandbox' | 'catalog' | 'log'>,
): Promise<void> {
  const log = deps.log;
  const audit = deps.audit().then(
    () => undefined,
    (err: unknown) => log.warn({ err }, 'could not open the audit log ahead of the first run'),
  );
  const sandbox = deps.sandbox().then(async (s) => {
    const p = await s.probe();
    if (!p.healthy) {
      log.warn({ diagnosis: p.diagnosis }, 'sandbox unavailable: skill scripts will be refused');
      return;
    }
    log.info({ adapter: p.adapter, limits: p.limits }, 'sandbox ready');
    const names = new Set<string>();
    for (const skill of deps.catalog().skills) {
      const name = skill.entryPoint === undefined ? undefined : interpreterForScript(skill.entryPoint);
      if (name !== undefined) names.add(name);
      if (names.size >= MAX_INTERPRETERS) break;
    }
    // A name the host lacks is the run's to report (its skill is refused then), not the start's.
    await Promise.all([...names].map((n) => s.interpreters.resolve(n).catch(() => undefined)));
  });
  await Promise.all([audit, sandbox.catch((err: unknown) => log.warn({ err }, 'sandbox probe failed'))]);
}
