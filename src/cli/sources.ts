import { parseArgs } from 'node:util';
import type { GitSource } from '../config/git-source-schema.js';
import { isSkillsError } from '../errors.js';
import { escapeForDisplay } from '../escape-for-display.js';
import { checkGitSource, type GitSourceState } from '../skills/check-git-source.js';
import { fetchGitSource } from '../skills/fetch-git-source.js';
import { checkoutDir } from '../skills/git-checkout.js';
import { refusePostgresAudit, resolveAuditPath, writerKeyOf } from './audit-path.js';
import { SOURCES_OPTIONS } from './command-options.js';
import { HELP } from './help.js';
import type { CliIo, ExitCode } from './io.js';
import { parseOptions } from './option-table.js';
import { recordSourceUpdate } from './record-source-update.js';
import { defined, resolveConfig, sourcesDir, type ResolvedConfig } from './resolve-config.js';

/** `skills-mcp sources list|update`: the pinned git sources of `skills:`, as checked out in the state folder. */
export function runSources(args: string[], io: CliIo): ExitCode {
  const [sub, ...rest] = args;
  if (sub === '--help' || sub === '-h') {
    io.out(`${HELP.sources}\n`);
    return 0;
  }
  if (sub !== 'list' && sub !== 'update') {
    io.err(
      `skills-mcp sources: ${sub === undefined ? 'a command is required' : `unknown command "${escapeForDisplay(sub)}"`}\n\n${HELP.sources}\n`,
    );
    return 2;
  }
  const { values } = parseArgs({ args: rest, options: parseOptions(SOURCES_OPTIONS), strict: true });
  if (values.help === true) {
    io.out(`${HELP.sources}\n`);
    return 0;
  }
  const loaded = resolveConfig(io, defined({ audit: values.audit }), values.config);
  if (loaded === undefined) return 2;
  const sources = loaded.config.git_sources;
  if (sources.length === 0) {
    io.out('no git sources: list {git: URL, ref: COMMIT, path: DIR} entries in skills: of skills-mcp.yaml\n');
    return 0;
  }
  if (sub === 'list') return listSources(io, loaded, sources);
  if (refusePostgresAudit(loaded.config, io, 'sources update')) return 2;
  return updateSources(io, loaded, sources);
}

const describe = (st: GitSourceState): string =>
  st.state === 'ok'
    ? 'ok'
    : st.state === 'missing'
      ? 'not fetched'
      : `${st.state === 'unsafe' ? 'unsafe' : 'changed'}: ${st.why}`;

function listSources(io: CliIo, loaded: ResolvedConfig, sources: readonly GitSource[]): ExitCode {
  const dir = sourcesDir(loaded.config, io);
  const lines = sources.map((s) => {
    const st = checkGitSource(s, checkoutDir(dir, s.git), io.env);
    const commit = st.state === 'ok' || st.state === 'changed' ? st.commit : undefined;
    const at = commit === undefined || commit === s.ref ? s.ref : `${commit} (${s.ref})`;
    return [`${s.git}@${at}`, `path ${s.path}`, describe(st)].map((c) => escapeForDisplay(c)).join('  ');
  });
  io.out(`${lines.join('\n')}\n`);
  return 0;
}

function updateSources(io: CliIo, loaded: ResolvedConfig, sources: readonly GitSource[]): ExitCode {
  const c = loaded.config;
  const auditPath = resolveAuditPath(c, io);
  const audit = { path: auditPath, sqliteDriver: c.audit_sqlite_driver, ...writerKeyOf(c, auditPath) };
  const dir = sourcesDir(c, io);
  let failed = false;
  const done = new Set<string>();
  for (const s of sources) {
    if (done.has(s.git)) continue; // one checkout per URL
    done.add(s.git);
    const checkout = checkoutDir(dir, s.git);
    const before = checkGitSource(s, checkout, io.env);
    if (before.state === 'unsafe') {
      failed = true;
      io.err(
        `skills-mcp sources update: git source ${escapeForDisplay(s.git)}: ${escapeForDisplay(before.why)}\n`,
      );
      continue;
    }
    if (before.state === 'ok' && before.commit === s.ref) {
      io.out(`${escapeForDisplay(s.git)}: already at ${s.ref}\n`);
      continue;
    }
    const old = before.state === 'changed' || before.state === 'ok' ? (before.commit ?? null) : null;
    try {
      const commit = fetchGitSource(s, checkout, io.env, (next) =>
        recordSourceUpdate(audit, {
          url: s.git,
          path: s.path,
          ref: s.ref,
          old_commit: old,
          new_commit: next,
        }),
      );
      io.out(
        `${escapeForDisplay(s.git)}: ${old === null ? 'fetched' : `${old.slice(0, 12)} ->`} ${commit}\n`,
      );
    } catch (e) {
      if (!isSkillsError(e)) throw e;
      failed = true;
      io.err(
        `skills-mcp sources update: ${escapeForDisplay(e.message)}\n${e.hint === undefined ? '' : `  ${e.hint}\n`}`,
      );
    }
  }
  return failed ? 1 : 0;
}
