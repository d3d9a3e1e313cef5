import { escapeForDisplay } from '../escape-for-display.js';
import { parseArgs } from 'node:util';
import { envFindings } from '../envs/env-findings.js';
import { describeGrants } from '../gate/effective-requests.js';
import { loadCatalog } from '../skills/catalog.js';
import { hostFolderOf } from '../skills/host-skill-folders.js';
import { isInside } from '../skills/list-skill-files.js';
import { displayPath, formatFinding } from './format-finding.js';
import { HELP } from './help.js';
import type { CliIo, ExitCode } from './io.js';
import { defined, resolveConfig, withSources } from './resolve-config.js';
import { LIST_OPTIONS } from './command-options.js';
import { parseOptions } from './option-table.js';

const table = (rows: string[][]): string => {
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => (r[i] ?? '').length)));
  return rows
    .map((r) => r.map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i]!))).join('  '))
    .join('\n');
};

export function runList(args: string[], io: CliIo): ExitCode {
  const { values } = parseArgs({
    args,
    options: parseOptions(LIST_OPTIONS),
    strict: true,
  });
  if (values.help) {
    io.out(`${HELP.list}\n`);
    return 0;
  }
  const loaded = resolveConfig(io, defined({ skills: values.skills }), values.config);
  if (loaded === undefined) return 2;
  if (!withSources(io, loaded)) return 2;
  if (loaded.config.skills.length === 0) {
    io.err('skills-mcp list: no skills folder: pass --skills DIR or set skills: in skills-mcp.yaml\n');
    return 2;
  }
  const catalog = loadCatalog(loaded.config.skills);
  const skipped = catalog.findings.filter((f) => f.severity === 'error');
  const overrides = loaded.config.dependencies.skills;
  const deps = new Map(catalog.skills.map((s) => [s.name, envFindings(s, overrides[s.name])]));
  /** Packages a skill imports but declares nowhere, or that its declaration is invalid. */
  const undeclared = (name: string) => {
    const d = deps.get(name);
    return d?.spec === undefined ? ['invalid declaration'] : d.undeclared.map((u) => u.package);
  };
  const { skill_overrides: overridden, sandbox } = loaded.config;
  const grantsOf = (s: (typeof catalog.skills)[number]) =>
    describeGrants(s, overridden[s.name], sandbox.profile);
  const hosts = loaded.hostFolders?.found;
  /** `claude (user)` for a skill found in a host's skill folder (with `--skills auto`). */
  const hostOf = (dir: string) => {
    const f = hosts === undefined ? undefined : hostFolderOf(hosts, dir);
    return f === undefined ? undefined : `${f.host} (${f.scope})`;
  };
  const gitRoots = loaded.config.git_roots;
  /** `url@short-commit` for a skill from a pinned git source. */
  const sourceOf = (dir: string) => gitRoots?.find((r) => isInside(r.root, dir))?.label;
  if (values.json) {
    const skills = catalog.skills.map((s) => ({
      name: s.name,
      tool: s.toolName,
      kind: s.kind,
      origin: displayPath(s.dir, io.cwd),
      ...(hosts === undefined ? {} : { host: hostOf(s.dir) ?? null }),
      ...(gitRoots === undefined ? {} : { source: sourceOf(s.dir) ?? null }),
      entryPoint: s.entryPoint ?? null,
      warnings: s.warnings.map((w) => ({ rule: w.rule, message: w.message })),
      runsWith: grantsOf(s),
      dependencies: {
        python: deps.get(s.name)?.spec?.python ?? [],
        node: deps.get(s.name)?.spec?.node ?? {},
        findings: (deps.get(s.name)?.findings ?? []).map((f) => ({
          path: displayPath(f.path, io.cwd),
          line: f.line ?? null,
          rule: f.rule,
          message: f.message,
        })),
      },
    }));
    const json = JSON.stringify(
      { skills, skipped: skipped.map((f) => ({ ...f, path: displayPath(f.path, io.cwd) })) },
      null,
      2,
    );
    io.out(`${escapeForDisplay(json, { multiline: true, json: true })}\n`);
    return 0;
  }
  const withHost = hosts !== undefined;
  const withSource = gitRoots !== undefined;
  const rows = [
    [
      'NAME',
      'KIND',
      'TOOL',
      'ORIGIN',
      ...(withHost ? ['HOST'] : []),
      ...(withSource ? ['SOURCE'] : []),
      'WARNINGS',
      'UNDECLARED IMPORTS',
    ],
  ];
  for (const s of catalog.skills) {
    rows.push(
      [
        s.name,
        s.kind,
        s.toolName === s.name ? '=' : s.toolName,
        displayPath(s.dir, io.cwd),
        ...(withHost ? [hostOf(s.dir) ?? '-'] : []),
        ...(withSource ? [sourceOf(s.dir) ?? '-'] : []),
        s.warnings.map((w) => w.rule).join(', ') || '-',
        undeclared(s.name).join(', ') || '-',
      ].map((cell) => escapeForDisplay(cell)),
    );
  }
  io.out(`${table(rows)}\n${catalog.skills.length} skills\n`);
  const operated = catalog.skills.filter((s) => overridden[s.name] !== undefined);
  if (operated.length > 0) {
    const line = (s: (typeof catalog.skills)[number]) => {
      const g = grantsOf(s);
      const parts = [
        `workspace ${g.workspace.value}`,
        `network ${g.network.value}`,
        `profile ${g.profile.value}`,
      ];
      const sources = [g.workspace.source, g.network.source, g.profile.source];
      return parts.map((p, i) => (sources[i] === 'operator' ? `${p} (operator)` : p)).join(', ');
    };
    io.out(
      `\nRuns with (skill_overrides in skills-mcp.yaml):\n${operated.map((s) => `  ${escapeForDisplay(s.name)}: ${escapeForDisplay(line(s))}`).join('\n')}\n`,
    );
  }
  const hints = [...deps.values()].flatMap((d) => d.findings);
  if (hints.length > 0)
    io.out(`\nDependencies to declare:\n${hints.map((f) => `  ${formatFinding(f, io.cwd)}`).join('\n')}\n`);
  if (skipped.length > 0)
    io.out(`\nSkipped:\n${skipped.map((f) => `  ${formatFinding(f, io.cwd)}`).join('\n')}\n`);
  return 0;
}
