import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { createInterface } from 'node:readline/promises';
import { parseArgs } from 'node:util';
import { RUN_OPTIONS } from './command-options.js';
import { parseOptions } from './option-table.js';
import type { ConfigInput } from '../config/config-schema.js';
import { escapeForDisplay } from '../escape-for-display.js';
import { isSkillsError, SkillsError } from '../errors.js';
import { DECISION_TITLES } from '../approvals/approval-decision.js';
import { type ApprovalAnswer } from '../approvals/approval-request.js';
import { type APPROVAL_DECISIONS } from '../approvals/approval-vocabulary.js';
import { createLogger } from '../log.js';
import type { CallResult } from '../runner/call-result.js';
import { renderJson } from '../runner/parse-bounded-json.js';
import type { SessionInfo } from '../runner/session.js';
import { loadCatalog } from '../skills/catalog.js';
import { createServices } from './create-services.js';
import { HELP } from './help.js';
import type { CliIo, ExitCode } from './io.js';
import { defined, resolveConfig, withSources } from './resolve-config.js';
import { refusePostgresAudit } from './audit-path.js';
import { packageVersion } from '../package-root.js';

const KEYS: Record<string, (typeof APPROVAL_DECISIONS)[number]> = {
  a: 'approved',
  s: 'approved_for_session',
  d: 'denied',
  x: 'abort',
};

/** Asks on the terminal: the form's message on stderr, one line of input. Never touches stdout. */
async function askOnTerminal(
  message: string,
  io: CliIo,
  stdin: NodeJS.ReadableStream,
): Promise<ApprovalAnswer> {
  io.err(`\n${message}\n\n`);
  for (const [k, d] of Object.entries(KEYS)) io.err(`  [${k}] ${DECISION_TITLES[d]}\n`);
  const rl = createInterface({ input: stdin, output: process.stderr, terminal: false });
  try {
    io.err('Decision [d]: ');
    const line = (await rl.question('')).trim().toLowerCase();
    const decision = KEYS[line === '' ? 'd' : line.slice(0, 1)];
    return decision === undefined ? { action: 'decline' } : { action: 'accept', content: { decision } };
  } catch {
    return { action: 'cancel' };
  } finally {
    rl.close();
  }
}

function readInput(value: string | undefined, cwd: string): unknown {
  if (value === undefined) return {};
  const text = value.startsWith('@') ? readFileSync(resolve(cwd, value.slice(1)), 'utf8') : value;
  return JSON.parse(text) as unknown;
}

/**
 * Prints a result for a person: everything the script controls (its text, JSON, file names) goes through
 * `escapeForDisplay`, so no byte it wrote acts on the terminal or forges a line of ours. JSON stays valid JSON.
 */
function print(r: CallResult, io: CliIo): ExitCode {
  io.out(
    `${
      r.json === undefined
        ? escapeForDisplay(r.text, { multiline: true })
        : escapeForDisplay(renderJson(r.json), { multiline: true, json: true })
    }\n`,
  );
  const files = r.artifacts.map((a) => `  ${escapeForDisplay(a.abs)}`).join('\n');
  io.err(
    `call ${r.callId ?? '-'}: ${r.status}${r.run === undefined ? '' : ` in ${r.run.durationMs} ms`}\n${files === '' ? '' : `files:\n${files}\n`}`,
  );
  if (r.isError && r.json !== undefined) io.err(`${escapeForDisplay(r.text, { multiline: true })}\n`);
  return r.isError ? 1 : 0;
}

/** `skills-mcp run <skill> [script] --input JSON|@file [-- args…]`: the same gated pipeline, approvals on the terminal. */
export async function runRun(args: string[], io: CliIo, stdin: NodeJS.ReadableStream): Promise<ExitCode> {
  const dash = args.indexOf('--');
  const extra = dash === -1 ? [] : args.slice(dash + 1);
  const { values, positionals } = parseArgs({
    args: dash === -1 ? args : args.slice(0, dash),
    options: parseOptions(RUN_OPTIONS),
    allowPositionals: true,
    strict: true,
  });
  if (values.help) {
    io.out(`${HELP.run}\n`);
    return 0;
  }
  const [skillName, script, ...more] = positionals;
  if (skillName === undefined || more.length > 0) {
    io.err(
      'skills-mcp run: give a skill name and optionally a script: `skills-mcp run <skill> [script] --input JSON`\n',
    );
    return 2;
  }
  let input: unknown;
  try {
    input = readInput(values.input, io.cwd);
  } catch (e) {
    io.err(`skills-mcp run: --input is not valid JSON (or @file unreadable): ${(e as Error).message}\n`);
    return 2;
  }
  const flags = defined({
    skills: values.skills,
    audit: values.audit,
    workspace: values.workspace,
    log_level: values['log-level'] ?? 'warn',
    watch: false,
  }) as Partial<ConfigInput>;
  const loaded = resolveConfig(io, flags, values.config);
  if (loaded === undefined) return 2;
  if (!withSources(io, loaded)) return 2;
  const { config } = loaded;
  if (refusePostgresAudit(config, io, 'run')) return 2;
  const catalog = loadCatalog(config.skills.length > 0 ? config.skills : [resolve(io.cwd, 'skills')]);
  const skill = catalog.get(skillName) ?? catalog.byToolName(skillName);
  if (skill === undefined) {
    io.err(
      `skills-mcp run: no skill named "${escapeForDisplay(skillName)}" (have: ${catalog.skills.map((s) => escapeForDisplay(s.name)).join(', ') || 'none'})\n`,
    );
    return 2;
  }
  const log = createLogger(config.log_level);
  const services = createServices(
    config,
    log,
    io,
    { catalog: () => catalog, headline: () => catalog },
    packageVersion(),
  );
  const session: SessionInfo = { id: randomUUID(), transport: 'cli' };
  const ctx = { canAsk: io.stdinIsTTY && config.elicitation, channel: 'terminal' as const };
  try {
    const req = {
      tool: script === undefined ? skill.toolName : 'run_skill_script',
      session,
      skill,
      ...(script === undefined ? {} : { script }),
      args: extra,
      input,
    };
    const begun = await services.runner.begin(req, ctx);
    // The terminal has no console to send a call on to: one that needs a passkey is refused by begin.
    if (begun.kind === 'console')
      throw new SkillsError('INTERNAL', 'a terminal call was sent to the console');
    const result =
      begun.kind === 'done'
        ? begun.result
        : await services.runner.resume(
            begun.callId,
            session,
            await askOnTerminal(begun.form.message, io, stdin),
            ctx,
          );
    return print(result, io);
  } catch (e) {
    if (!isSkillsError(e)) throw e;
    io.err(
      `skills-mcp run: ${escapeForDisplay(`${e.message}${e.hint === undefined ? '' : `\n${e.hint}`}`, { multiline: true })}\n`,
    );
    return 1;
  } finally {
    await services.runner.endSession(session, 'client_closed');
    await services.close();
  }
}
