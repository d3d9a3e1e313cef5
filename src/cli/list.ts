import { parseArgs } from 'node:util';
import { loadCatalog } from '../skills/catalog.js';
import { displayPath, formatFinding } from './format-finding.js';
import { HELP } from './help.js';
import type { CliIo, ExitCode } from './io.js';
import { defined, resolveConfig } from './resolve-config.js';

const table = (rows: string[][]): string => {
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => (r[i] ?? '').length)));
  return rows
    .map((r) => r.map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i]!))).join('  '))
    .join('\n');
};

export function runList(args: string[], io: CliIo): ExitCode {
  const { values } = parseArgs({
    args,
    options: {
      skills: { type: 'string', multiple: true },
      config: { type: 'string' },
      json: { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
    },
    strict: true,
  });
  if (values.help) {
    io.out(`${HELP.list}\n`);
    return 0;
  }
  const loaded = resolveConfig(io, defined({ skills: values.skills }), values.config);
  if (loaded === undefined) return 2;
  if (loaded.config.skills.length === 0) {
    io.err('skills-mcp list: no skills folder: pass --skills DIR or set skills: in skills-mcp.yaml\n');
    return 2;
  }
  const catalog = loadCatalog(loaded.config.skills);
  const skipped = catalog.findings.filter((f) => f.severity === 'error');
  if (values.json) {
    const skills = catalog.skills.map((s) => ({
      name: s.name,
      tool: s.toolName,
      kind: s.kind,
      origin: displayPath(s.dir, io.cwd),
      entryPoint: s.entryPoint ?? null,
      warnings: s.warnings.map((w) => ({ rule: w.rule, message: w.message })),
    }));
    io.out(
      `${JSON.stringify({ skills, skipped: skipped.map((f) => ({ ...f, path: displayPath(f.path, io.cwd) })) }, null, 2)}\n`,
    );
    return 0;
  }
  const rows = [['NAME', 'KIND', 'TOOL', 'ORIGIN', 'WARNINGS']];
  for (const s of catalog.skills) {
    rows.push([
      s.name,
      s.kind,
      s.toolName === s.name ? '=' : s.toolName,
      displayPath(s.dir, io.cwd),
      s.warnings.map((w) => w.rule).join(', ') || '-',
    ]);
  }
  io.out(`${table(rows)}\n${catalog.skills.length} skills\n`);
  if (skipped.length > 0)
    io.out(`\nSkipped:\n${skipped.map((f) => `  ${formatFinding(f, io.cwd)}`).join('\n')}\n`);
  return 0;
}
