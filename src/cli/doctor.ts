import {
  probeSqliteDrivers,
  type SqliteDriversProbe,
  type SqliteLoaders,
} from '../audit/sqlite/probe-sqlite-drivers.js';
import { isSkillsError } from '../errors.js';
import { silentLogger } from '../log.js';
import {
  createSandbox,
  listProfiles,
  profileLimits,
  type ProbeResult,
  type Profile,
  type Sandbox,
  type SandboxOptions,
} from '../sandbox/index.js';
import { checkPrograms, type ProgramReport } from './check-programs.js';
import type { CliIo, ExitCode } from './io.js';
import { parseArgs } from 'node:util';
import { DOCTOR_OPTIONS } from './command-options.js';
import { HELP } from './help.js';
import { parseOptions } from './option-table.js';

interface InterpreterReport {
  name: string;
  command?: string;
  source?: string;
  mounts?: string[];
  runsInSandbox: boolean;
  error?: string;
}

interface DoctorReport {
  healthy: boolean;
  platform: string;
  arch: string;
  node: { version: string; execPath: string };
  serverUid?: number;
  sandbox: ProbeResult;
  interpreters: InterpreterReport[];
  programs: ProgramReport[];
  profiles: Array<{ name: string; valid: boolean; error?: string }>;
  auditSqlite: SqliteDriversProbe;
}

const message = (e: unknown) => (e instanceof Error ? e.message : String(e));

async function checkInterpreter(sb: Sandbox, name: string, probeArgs: string[], profile?: Profile) {
  const r: InterpreterReport = { name, runsInSandbox: false };
  try {
    const i = await sb.interpreters.resolve(name);
    Object.assign(r, { command: i.command, source: i.source, mounts: i.mounts });
    if (profile === undefined) return { ...r, error: 'no valid default profile to test with' };
    const res = await sb.run({
      argv: [name, ...probeArgs],
      cwd: '/tmp',
      env: {},
      readOnlyPaths: [],
      writablePaths: [],
      network: 'none',
      profile: profile.name,
      limits: { ...profileLimits(profile), wallTimeMs: 20_000 },
    });
    r.runsInSandbox = res.exitCode === 0;
    if (!r.runsInSandbox)
      r.error = res.stderr.toString('utf8').trim().split('\n').slice(-2).join(' ') || 'failed';
  } catch (e) {
    r.error = isSkillsError(e) ? e.message : message(e);
  }
  return r;
}

function render(rep: DoctorReport): string {
  const s = rep.sandbox;
  const lines = [
    'skills-mcp doctor',
    `  platform      ${rep.platform} ${rep.arch}, Node ${rep.node.version} (${rep.node.execPath})`,
    `  sandbox       ${s.adapter}${s.binary === undefined ? '' : ` ${s.binary}`}${s.version === undefined ? '' : ` (${s.version})`}: ${s.healthy ? 'healthy' : 'NOT AVAILABLE'}`,
    `  diagnosis     ${s.diagnosis.code}: ${s.diagnosis.message}`,
  ];
  if (s.diagnosis.hint !== undefined) lines.push(`  fix           ${s.diagnosis.hint}`);
  if (!s.healthy)
    lines.push('  effect        skill scripts are refused (SANDBOX_DENIED) until this is fixed');
  if (s.diagnosis.detail !== undefined)
    lines.push(`  detail        ${s.diagnosis.detail.replace(/\n/g, ' | ')}`);
  const layer = s.limits.cgroup === 'none' ? 'no cgroups' : `cgroup ${s.limits.cgroup}`;
  lines.push(
    `  limits        ${layer}: memory=${s.limits.memory}, pids=${s.limits.pids}${s.limits.reason === undefined ? '' : ` (${s.limits.reason})`}`,
    `  seccomp       ${s.seccomp ? 'yes' : 'no'}`,
  );
  if (s.sandboxUid !== undefined) {
    lines.push(
      `  sandbox uid   ${s.sandboxUid}${rep.serverUid === 0 ? ' (server runs as root; scripts do not)' : ''}`,
    );
  }
  if (!s.healthy) lines.push('  interpreters  not checked: they run only inside the sandbox');
  else lines.push('  interpreters');
  for (const i of s.healthy ? rep.interpreters : []) {
    const where = i.command === undefined ? 'not found' : i.command;
    const via = i.source !== undefined && i.source !== i.command ? ` via ${i.source}` : '';
    const mounts = i.mounts !== undefined && i.mounts.length > 0 ? `; mounts ${i.mounts.join(', ')}` : '';
    const ok = i.runsInSandbox ? 'runs in sandbox' : `does not run: ${i.error ?? 'unknown'}`;
    lines.push(`    ${i.name.padEnd(8)}${where}${via}${mounts} — ${ok}`);
  }
  if (s.healthy) lines.push('  programs');
  for (const p of s.healthy ? rep.programs : []) {
    const state = !p.installed
      ? 'not installed'
      : p.runsInSandbox
        ? 'runs in sandbox'
        : `does not run: ${p.error ?? 'unknown'}`;
    lines.push(`    ${p.name.padEnd(9)}${p.path === undefined ? '' : `${p.path} — `}${state}`);
    if (p.installed && !p.runsInSandbox && p.fix !== undefined) lines.push(`      fix: ${p.fix}`);
  }
  lines.push('  profiles');
  for (const p of rep.profiles)
    lines.push(`    ${p.name.padEnd(8)}${p.valid ? 'valid' : `INVALID: ${p.error ?? ''}`}`);
  lines.push(...renderAuditSqlite(rep.auditSqlite));
  return `${lines.join('\n')}\n`;
}

/** The binding the audit log opens with (audit_sqlite_driver: auto), and why better-sqlite3 is not it. */
function renderAuditSqlite(p: SqliteDriversProbe): string[] {
  if (p.betterSqlite3.loads) return ['  audit sqlite  better-sqlite3'];
  const why = p.betterSqlite3.message;
  if (p.auto === 'node') return [`  audit sqlite  node:sqlite (${why})`];
  return [`  audit sqlite  NOT AVAILABLE: ${why}`, `  fix           ${p.betterSqlite3.hint}`];
}

/** What a test may swap in the sandbox doctor checks: where bwrap is looked for, how host facts are read. */
export type DoctorSandboxOptions = Pick<SandboxOptions, 'bwrapCandidates' | 'hostFacts'>;

export async function runDoctor(
  args: string[],
  io: CliIo,
  sandboxOptions: DoctorSandboxOptions = {},
  sqliteLoaders: SqliteLoaders = {},
): Promise<ExitCode> {
  // A parse error (an unknown or malformed option) is main's to report, with the command's usage.
  const parsed = parseArgs({
    args,
    options: parseOptions(DOCTOR_OPTIONS),
    allowPositionals: false,
    strict: true,
  });
  if (parsed.values.help === true) {
    io.out(`${HELP.doctor}\n`);
    return 0;
  }
  const json = parsed.values.json === true;
  const profilesDir = parsed.values.profiles;
  const sb = createSandbox({
    ...sandboxOptions,
    log: silentLogger(),
    env: io.env,
    ...(profilesDir === undefined ? {} : { profilesDir }),
  });
  try {
    const probe = await sb.probe();
    const profiles: DoctorReport['profiles'] = [];
    const loaded = new Map<string, Profile>();
    for (const name of await listProfiles(sb.profilesDir)) {
      try {
        loaded.set(name, await sb.loadProfile(name));
        profiles.push({ name, valid: true });
      } catch (e) {
        profiles.push({ name, valid: false, error: message(e) });
      }
    }
    const profile = loaded.get('default') ?? [...loaded.values()][0];
    const interpreters: InterpreterReport[] = [];
    for (const [name, probeArgs] of [
      ['python3', ['-c', 'pass']],
      ['node', ['-e', '0']],
      ['bash', ['-c', ':']],
    ] as const) {
      interpreters.push(
        probe.healthy
          ? await checkInterpreter(sb, name, [...probeArgs], profile)
          : { name, runsInSandbox: false, error: 'sandbox not available' },
      );
    }
    const programs = probe.healthy && profile !== undefined ? await checkPrograms(sb, profile) : [];
    const uid = process.getuid?.();
    const report: DoctorReport = {
      healthy: probe.healthy,
      platform: process.platform,
      arch: process.arch,
      node: { version: process.version, execPath: process.execPath },
      ...(uid === undefined ? {} : { serverUid: uid }),
      sandbox: probe,
      interpreters,
      programs,
      profiles,
      auditSqlite: probeSqliteDrivers(sqliteLoaders),
    };
    io.out(json ? `${JSON.stringify(report, null, 2)}\n` : render(report));
    return probe.healthy ? 0 : 1;
  } finally {
    await sb.dispose();
  }
}
