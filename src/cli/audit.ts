import { escapeForDisplay } from '../escape-for-display.js';
import { existsSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { openAuditStore } from '../audit/open-audit-store.js';
import type { SqliteDriverChoice } from '../audit/sqlite/sqlite-db.js';
import type { AuditStore } from '../audit/audit-store.js';
import { shortCallId } from '../audit/call-id.js';
import type { CallDetail, CallRow } from '../audit/types.js';
import type { ApprovalRequestedPayload } from '../audit/payload-schemas.js';
import { isSkillsError } from '../errors.js';
import { isPostgresUrl } from '../audit/postgres/postgres-url.js';
import { auditExport } from './audit-export.js';
import { auditArchive } from './audit-archive.js';
import { auditReanchor } from './audit-reanchor.js';
import { jsonText } from './json-text.js';
import { PG_AUDIT_COMMANDS, runPgAudit } from './audit-postgres.js';
import { auditVerify, type AnchorPaths } from './audit-verify.js';
import { ALL_AUDIT_OPTIONS, AUDIT_OPTIONS } from './audit-options.js';
import { AUDIT_HELP } from './help.js';
import { parseOptions } from './option-table.js';
import type { CliIo, ExitCode } from './io.js';

type Sub = Exclude<keyof typeof AUDIT_HELP, 'audit'>;
const SUBS: readonly Sub[] = ['verify', 'reanchor', 'archive', 'list', 'show', 'export'];
const OPTIONS = parseOptions(ALL_AUDIT_OPTIONS);

/** `skills-mcp audit …`. Opens the log read-only (`reanchor` excepted); writes only through `io`. */
export function runAudit(args: string[], io: CliIo, opts: AuditOptions): Promise<ExitCode> {
  return audit(args, io, opts);
}

export interface AuditOptions {
  auditPath: string;
  /** Where the anchors and their key are (flags --anchors and --anchor-key override). */
  anchors: AnchorPaths;
  /** For a PostgreSQL log: the anchor file and key named in the config, if any (no defaults beside a URL). */
  pgAnchors?: { file?: string | undefined; keyFile?: string | undefined };
  /** The SQLite binding (`audit_sqlite_driver`). */
  sqliteDriver?: SqliteDriverChoice | undefined;
}

async function audit(args: string[], io: CliIo, opts: AuditOptions): Promise<ExitCode> {
  const [sub, ...rest] = args;
  if (sub === undefined || sub === '--help' || sub === '-h' || sub === 'help') {
    (sub === undefined ? io.err : io.out)(`${AUDIT_HELP.audit}\n`);
    return sub === undefined ? 2 : 0;
  }
  if (!(SUBS as readonly string[]).includes(sub)) return usage(io, `unknown audit command "${sub}"`);
  const command = sub as Sub;
  let parsed: ReturnType<
    typeof parseArgs<{ args: string[]; options: typeof OPTIONS; allowPositionals: true; strict: true }>
  >;
  try {
    parsed = parseArgs({ args: rest, options: OPTIONS, allowPositionals: true, strict: true });
  } catch (e) {
    return usage(io, (e as Error).message, command);
  }
  const { values, positionals } = parsed;
  const extra = Object.keys(values).find((k) => !Object.hasOwn(AUDIT_OPTIONS[command], k));
  if (extra !== undefined) return usage(io, `${command} does not take --${extra}`, command);
  if (values.help) {
    io.out(`${AUDIT_HELP[command]}\n`);
    return 0;
  }
  if (positionals.length !== (command === 'show' ? 1 : 0)) {
    return usage(
      io,
      command === 'show' ? 'show takes one call id' : `${command} takes no arguments`,
      command,
    );
  }
  const limit = values.limit === undefined ? undefined : Number(values.limit);
  if (limit !== undefined && !(Number.isSafeInteger(limit) && limit > 0)) {
    return usage(io, '--limit takes a positive whole number', command);
  }

  if (command === 'reanchor' && values['i-understand'] !== true) {
    return usage(
      io,
      'reanchor accepts the audit log as it stands now, whatever happened to it before: say --i-understand',
      command,
    );
  }
  const olderThan = values['older-than'] === undefined ? undefined : Number(values['older-than']);
  if (command === 'archive') {
    if (olderThan === undefined || !(Number.isFinite(olderThan) && olderThan >= 0))
      return usage(io, 'archive needs --older-than DAYS (a number of days, 0 or more)', command);
    if (values.out === undefined || values.out === '')
      return usage(io, 'archive needs --out FILE (a new file for the archive)', command);
  }
  if (isPostgresUrl(opts.auditPath)) {
    if (command === 'archive' || values.archive !== undefined)
      return usage(io, 'a PostgreSQL audit log cannot be archived or pruned yet', command);
    if (!PG_AUDIT_COMMANDS.includes(command))
      return usage(
        io,
        `${command} reads the SQLite audit log only; a PostgreSQL log supports verify and export`,
        command,
      );
    const file = values.anchors ?? opts.pgAnchors?.file;
    const keyFile = values['anchor-key'] ?? opts.pgAnchors?.keyFile;
    if (command === 'export')
      return runPgAudit(command, opts.auditPath, io, {
        json: false,
        anchors: undefined,
        export: {
          anchorFile: values['events-only'] === true ? undefined : file,
          allowBroken: values['allow-broken'] === true,
        },
      });
    if ((file === undefined) !== (keyFile === undefined))
      return usage(io, 'a PostgreSQL audit log needs both --anchors and --anchor-key, or neither', command);
    return runPgAudit(command, opts.auditPath, io, {
      json: values.json === true,
      anchors: file === undefined || keyFile === undefined ? undefined : { file, keyFile },
    });
  }
  if (!existsSync(opts.auditPath)) {
    io.err(
      `skills-mcp audit: no audit log at ${opts.auditPath}\n` +
        'Nothing has been recorded there yet (the server creates it on its first call), or --audit points elsewhere.\n',
    );
    return 1;
  }
  let store: AuditStore | undefined;
  try {
    store = openAuditStore(
      command === 'reanchor' || command === 'archive'
        ? { path: opts.auditPath, recover: false, verifyOnOpen: false, sqliteDriver: opts.sqliteDriver }
        : { path: opts.auditPath, readOnly: true, sqliteDriver: opts.sqliteDriver },
    );
    const anchors = {
      file: values.anchors ?? opts.anchors.file,
      keyFile: values['anchor-key'] ?? opts.anchors.keyFile,
    };
    switch (command) {
      case 'verify':
        // Awaited here, so the store stays open until the passkey checks are done.
        return await auditVerify(store, io, values.json === true, anchors, values.archive);
      case 'archive':
        return auditArchive(store, io, anchors, {
          out: values.out!,
          olderThanDays: olderThan!,
          dryRun: values['dry-run'] === true,
        });
      case 'reanchor':
        return auditReanchor(store, io, anchors);
      case 'list': {
        const calls = store.listCalls({
          ...(values.session === undefined ? {} : { sessionId: values.session }),
          ...(values.skill === undefined ? {} : { skill: values.skill }),
          ...(limit === undefined ? {} : { limit }),
        });
        io.out(values.json ? `${jsonText(calls, 2)}\n` : listTable(calls));
        return 0;
      }
      case 'show':
        return show(store, io, positionals[0]!, values.json === true);
    }
    return auditExport(store, io, {
      anchorFile: values['events-only'] === true ? undefined : anchors.file,
      allowBroken: values['allow-broken'] === true,
    });
  } catch (e) {
    const hint = isSkillsError(e) && e.hint ? `\n${e.hint}` : '';
    io.err(`skills-mcp audit: ${(e as Error).message}${hint}\n`);
    return 1;
  } finally {
    store?.close();
  }
}

function usage(io: CliIo, message: string, command?: Sub): ExitCode {
  io.err(`skills-mcp audit: ${message}\n\n${AUDIT_HELP[command ?? 'audit']}\n`);
  return 2;
}

const time = (ts: number | null): string =>
  ts === null ? '-' : new Date(ts).toISOString().replace('T', ' ');
/** Session ids are shown by their first characters (`http-…`, a uuid), call ids by their last (`shortCallId`). */
const short = (id: string): string => id.slice(0, 8);

function listTable(calls: CallRow[]): string {
  const rows = [['CALL', 'TIME (UTC)', 'SESSION', 'TOOL', 'SKILL', 'STATUS', 'APPROVAL', 'MS']];
  for (const c of calls) {
    rows.push(
      [
        shortCallId(c.callId),
        time(c.requestedTs),
        short(c.sessionId),
        c.tool,
        [c.skill ?? '-', c.script].filter(Boolean).join(' '),
        c.status ?? c.state,
        c.approvalDecision ? `${c.approvalDecision} (${c.approvalReason})` : '-',
        c.durationMs === null ? '-' : String(c.durationMs),
      ].map((cell) => escapeForDisplay(cell)),
    );
  }
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  const lines = rows.map((r) => r.map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i]!))).join('  '));
  return `${lines.join('\n')}\n${calls.length} ${calls.length === 1 ? 'call' : 'calls'}\n`;
}

function show(store: AuditStore, io: CliIo, id: string, json: boolean): ExitCode {
  let detail = store.getCall(id);
  if (detail === undefined) {
    const matches = store.findCallIds(id, 6);
    if (matches.length !== 1) {
      const more = matches.length > 5 ? ', …' : '';
      const why =
        matches.length === 0 ? 'no call matches' : `${matches.slice(0, 5).join(', ')}${more} all match`;
      io.err(`skills-mcp audit: ${escapeForDisplay(`${why} "${id}"`)}\n`);
      return 1;
    }
    detail = store.getCall(matches[0]!)!;
  }
  io.out(json ? `${jsonText(detail, 2)}\n` : describeCall(detail));
  return 0;
}

/** What the person was shown: risk as shown, the form's digest (compare with `sha256sum` of its text), findings. */
function shownLine(s: NonNullable<ApprovalRequestedPayload['shown']>): string {
  const risk = `${s.risk.level.toUpperCase()}${s.risk.level === 'low' ? '' : ` (${s.risk.code})`}`;
  const form = s.message_sha256 === undefined ? '  (console card)' : `  form sha256 ${s.message_sha256}`;
  const more = s.findings_count === undefined ? '' : ` and ${s.findings_count - s.findings.length} more`;
  const findings =
    s.findings.length === 0 ? '' : `  findings ${s.findings.map((f) => f.rule).join(', ')}${more}`;
  return `shown     risk ${risk}${form}${findings}`;
}

function describeCall({ call: c, approval, artifacts, events }: CallDetail): string {
  const out = [
    `call      ${c.callId}`,
    `session   ${c.sessionId}`,
    `tool      ${c.tool}${c.skill ? `  skill ${c.skill}` : ''}${c.script ? `  script ${c.script}` : ''}`,
    `input     sha256 ${c.inputSha256}  ${c.inputBytes} bytes${c.valid ? '' : '  (invalid)'}`,
    `bundle    ${c.bundleSha256 ?? '-'}`,
    `state     ${c.state}${c.status ? ` (${c.status})` : ''}${c.exitCode === null ? '' : `  exit ${c.exitCode}`}${c.durationMs === null ? '' : `  ${c.durationMs} ms`}`,
  ];
  if (c.policyDecision)
    out.push(`policy    ${c.policyDecision}  rule ${c.policyRule ?? '(mode)'}  risk ${c.riskLevel}`);
  const asked = events.find((e) => e.type === 'approval_requested');
  const shown = asked?.type === 'approval_requested' ? asked.payload.shown : undefined;
  if (shown !== undefined) out.push(shownLine(shown));
  if (approval) {
    const decided = approval.decision ? `${approval.decision} (${approval.reason})` : 'pending';
    out.push(`approval  ${decided} via ${approval.channel}  key ${approval.approvalKey}`);
  }
  if (artifacts.length > 0) {
    out.push('artifacts');
    for (const a of artifacts) out.push(`  ${a.path}  ${a.bytes} bytes  sha256 ${a.sha256}`);
  }
  out.push('events');
  for (const e of events) out.push(`  #${e.eventId}  ${time(e.ts)}  ${e.type}  ${JSON.stringify(e.payload)}`);
  // One escaped line per entry: a name holding a line feed or a terminal sequence cannot forge a line.
  return `${out.map((line) => escapeForDisplay(line)).join('\n')}\n`;
}
