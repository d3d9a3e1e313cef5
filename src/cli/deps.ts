import { dirname, join } from 'node:path';
import { parseArgs } from 'node:util';
import { createEnvResolver, type SkillEnv } from '../envs/create-env-resolver.js';
import { listEnvs, removeTree } from '../envs/env-store.js';
import type { AuditStore } from '../audit/audit-store.js';
import { openAuditStore } from '../audit/open-audit-store.js';
import { isSkillsError } from '../errors.js';
import { createLogger } from '../log.js';
import { createSandbox } from '../sandbox/create-sandbox.js';
import { loadCatalog } from '../skills/catalog.js';
import type { Skill } from '../skills/types.js';
import { packageRoot, packageVersion } from '../package-root.js';
import {
  refusePostgresAudit,
  resolveAnchorPaths,
  resolveAuditPath,
  resolveRunsDir,
  writerKeyOf,
} from './audit-path.js';
import { HELP } from './help.js';
import { recordDepsInstall, type DepsInstallRecord } from './record-deps-install.js';
import type { CliIo, ExitCode } from './io.js';
import { defined, resolveConfig, withSources } from './resolve-config.js';
import { DEPS_OPTIONS } from './command-options.js';
import { parseOptions } from './option-table.js';

/** `skills-mcp deps list|install [skill…]|prune`: the operator's view of skill environments. */
export async function runDeps(args: string[], io: CliIo): Promise<ExitCode> {
  const { values, positionals } = parseArgs({
    args,
    options: parseOptions(DEPS_OPTIONS),
    allowPositionals: true,
    strict: true,
  });
  const [sub, ...names] = positionals;
  if (values.help || sub === undefined) {
    io.out(`${HELP.deps}\n`);
    return sub === undefined && values.help !== true ? 2 : 0;
  }
  const loaded = resolveConfig(io, defined({ skills: values.skills, audit: values.audit }), values.config);
  if (loaded === undefined) return 2;
  const { config } = loaded;
  if (refusePostgresAudit(config, io, 'deps')) return 2;
  if (!withSources(io, loaded)) return 2;
  if (config.skills.length === 0) {
    io.err('skills-mcp deps: no skills folder: pass --skills DIR or set skills: in skills-mcp.yaml\n');
    return 2;
  }
  const catalog = loadCatalog(config.skills);
  const auditPath = resolveAuditPath(config, io);
  const envsDir = config.dependencies.dir ?? join(dirname(auditPath), 'envs');
  const log = createLogger(config.log_level ?? 'warn');
  const { file, keyFile } = resolveAnchorPaths(config, auditPath);
  const envs = createEnvResolver({
    config: config.dependencies,
    envsDir,
    env: io.env,
    log,
    protect: [
      auditPath,
      file,
      keyFile,
      join(dirname(auditPath), 'console'),
      resolveRunsDir(config, auditPath),
    ],
  });
  const picked: Skill[] = [];
  for (const n of names) {
    const s = catalog.get(n);
    if (s === undefined) {
      io.err(`skills-mcp deps: no skill named "${n}"\n`);
      return 2;
    }
    picked.push(s);
  }
  const withEnvs = async (skills: readonly Skill[]) => {
    const out: { skill: Skill; env: SkillEnv }[] = [];
    for (const skill of skills) {
      const env = await envs.forSkill(skill);
      if (env !== undefined) out.push({ skill, env });
    }
    return out;
  };
  try {
    if (sub === 'list') {
      const rows = [];
      for (const skill of picked.length > 0 ? picked : catalog.skills) {
        const p = await envs.provision(skill);
        if (p.kind !== 'none') rows.push({ skill, p });
      }
      if (values.json) {
        const list = rows.map(({ skill, p }) =>
          p.kind === 'env'
            ? { skill: skill.name, id: p.env.id, ready: p.env.ready, dir: p.env.dir, ...p.env.spec }
            : { skill: skill.name, host: true, python: p.python, packages: p.packages },
        );
        io.out(`${JSON.stringify({ envsDir, environments: list }, null, 2)}\n`);
        return 0;
      }
      for (const { skill, p } of rows) {
        if (p.kind === 'host') {
          const have = p.packages.map((r) => `${r.requirement} (${r.installed ?? '?'})`);
          io.out(`${skill.name}  host packages of ${p.python}  ${have.join(' ')}  (no environment built)\n`);
          continue;
        }
        const { env } = p;
        const pkgs = [...env.spec.python, ...Object.entries(env.spec.node).map(([k, v]) => `${k}@${v}`)];
        io.out(
          `${skill.name}  ${env.id.slice(0, 12)}  ${env.ready ? 'built' : 'missing'}  ${pkgs.join(' ')}  (from ${env.spec.sources.join(', ')})\n`,
        );
      }
      const built = rows.filter((r) => r.p.kind === 'env').length;
      io.out(
        `${built} skills with an environment${rows.length > built ? `, ${rows.length - built} on the interpreter's own packages` : ''}; built environments in ${envsDir}\n`,
      );
      const python = config.dependencies.python;
      io.out(
        `Python: ${python ?? "python3 from the server's PATH"}${python === undefined ? '' : ' (dependencies.python)'}\n`,
      );
      return 0;
    }
    if (sub === 'install') {
      const rows = await withEnvs(picked.length > 0 ? picked : catalog.skills);
      const sandbox = createSandbox({
        log,
        env: io.env,
        mode: config.sandbox.mode,
        profilesDir: config.sandbox.profiles_dir ?? join(packageRoot(), 'sandbox-profiles'),
      });
      // Every install is recorded where the server records its calls; nothing is built when that fails.
      let store: AuditStore | undefined;
      let record: DepsInstallRecord | undefined;
      let failed = 0;
      try {
        for (const { skill, env } of rows) {
          if (env.ready) {
            io.out(`${skill.name}: already built (${env.id.slice(0, 12)})\n`);
            continue;
          }
          if (record === undefined) {
            store = openAuditStore({
              path: auditPath,
              log,
              sqliteDriver: config.audit_sqlite_driver,
              ...writerKeyOf(config, auditPath),
            });
            record = recordDepsInstall(store, packageVersion());
          }
          const plan = await envs.plan(env);
          io.out(
            `${skill.name}: installing ${env.id.slice(0, 12)}\n${plan.commands.map((c) => `  $ ${c}`).join('\n')}\n${plan.sources.map((s) => `  from ${s}`).join('\n')}\n`,
          );
          const started = Date.now();
          try {
            const m = await record.install(skill.name, env, () => envs.install(env, skill, sandbox));
            io.out(`${skill.name}: installed ${m.installed.join(' ')} in ${Date.now() - started} ms\n`);
          } catch (e) {
            if (!isSkillsError(e) || e.code.startsWith('AUDIT_')) throw e;
            failed++;
            io.err(`${skill.name}: ${e.message}${e.hint === undefined ? '' : `\n${e.hint}`}\n`);
          }
        }
        return failed > 0 ? 1 : 0;
      } finally {
        try {
          record?.close(failed > 0);
        } finally {
          store?.close();
          await sandbox.dispose();
        }
      }
    }
    if (sub === 'prune') {
      const keep = new Set((await withEnvs(catalog.skills)).map((r) => r.env.id));
      const { built, leftovers } = listEnvs(envsDir);
      const remove = [...built.filter((m) => !keep.has(m.id)).map((m) => m.id), ...leftovers];
      for (const n of remove) removeTree(join(envsDir, n));
      io.out(
        `removed ${remove.length} (kept ${built.length - (remove.length - leftovers.length)}) in ${envsDir}\n`,
      );
      return 0;
    }
  } catch (e) {
    if (!isSkillsError(e)) throw e;
    io.err(`skills-mcp deps: ${e.message}${e.hint === undefined ? '' : `\n${e.hint}`}\n`);
    return 1;
  }
  io.err(`skills-mcp deps: unknown subcommand "${sub}"\n\n${HELP.deps}\n`);
  return 2;
}
