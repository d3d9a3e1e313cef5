import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { envFindings } from '../envs/env-findings.js';
import { ConfigSchema } from '../config/config-schema.js';
import { archiveRoots } from '../skills/archive-roots.js';
import { loadCatalog } from '../skills/catalog.js';
import { displayPath, formatFinding } from './format-finding.js';
import { HELP } from './help.js';
import type { CliIo, ExitCode } from './io.js';
import { LINT_OPTIONS } from './command-options.js';
import { parseOptions } from './option-table.js';
import { archivesDir } from './resolve-config.js';

export function runLint(args: string[], io: CliIo): ExitCode {
  const { values, positionals } = parseArgs({
    args,
    options: parseOptions(LINT_OPTIONS),
    allowPositionals: true,
    strict: true,
  });
  if (values.help) {
    io.out(`${HELP.lint}\n`);
    return 0;
  }
  if (positionals.length === 0) {
    io.err('skills-mcp lint: give at least one skills folder, e.g. `skills-mcp lint ./skills`\n');
    return 2;
  }
  const roots = positionals.map((p) => resolve(io.cwd, p));
  const archives = archiveRoots(roots, archivesDir(ConfigSchema.parse({}), io));
  const catalog = loadCatalog([...roots, ...archives.roots]);
  const deps = catalog.skills.flatMap((s) => envFindings(s).findings);
  const findings = [...archives.findings, ...catalog.lint, ...deps].sort(
    (a, b) => Number(a.severity === 'warning') - Number(b.severity === 'warning'),
  );
  const errors = findings.filter((f) => f.severity === 'error').length;
  if (values.json) {
    const rows = findings.map((f) => ({ ...f, path: displayPath(f.path, io.cwd) }));
    io.out(
      `${JSON.stringify({ skills: catalog.skills.length, errors, warnings: findings.length - errors, findings: rows }, null, 2)}\n`,
    );
  } else {
    for (const f of findings) io.out(`${formatFinding(f, io.cwd)}\n`);
    io.out(
      `${catalog.skills.length} skills loaded; ${errors} errors, ${findings.length - errors} warnings\n`,
    );
  }
  return errors > 0 ? 1 : 0;
}
