import { randomBytes } from 'node:crypto';
import { userInfo } from 'node:os';
import { parseArgs } from 'node:util';
import { CONSOLE_CSS, CONSOLE_ICON } from '../console/assets.js';
import { startConsoleServer } from '../console/console-server.js';
import type { RouteRequest, RouteResponse } from '../console/route-types.js';
import { isSkillsError, SkillsError } from '../errors.js';
import { fileApproverStore, type ApproverStore } from '../passkeys/approver-store.js';
import { createEnrolment } from '../passkeys/enroll-ceremony.js';
import { enrollPage } from '../passkeys/enroll-page.js';
import { PASSKEY_JS } from '../passkeys/passkey-script.js';
import { APPROVERS_OPTIONS } from './command-options.js';
import { HELP } from './help.js';
import { parseOptions } from './option-table.js';
import { printable } from './audit-verify.js';
import type { CliIo, ExitCode } from './io.js';
import { createLogger, type Logger, type LogLevel } from '../log.js';
import { dirname } from 'node:path';
import type { CliAudit } from './append-cli-event.js';
import { recordApproverEvent } from './record-approver-event.js';

const ENROLL_WAIT_MS = 10 * 60_000;
const USED_UP = 'this enrolment link is used up: run skills-mcp approvers enroll again';

const json = (status: number, value: unknown): RouteResponse => ({
  status,
  type: 'application/json; charset=utf-8',
  body: JSON.stringify(value),
});

/** `skills-mcp approvers enroll|list|remove`: the person's own route to the passkeys that approve runs. */
export async function runApprovers(
  args: string[],
  io: CliIo,
  opts: {
    localBase: string;
    logLevel: LogLevel;
    audit?: CliAudit | undefined;
    /** Where the passkeys are kept; default approvers.json in the state folder. */
    store?: ApproverStore;
  },
): Promise<ExitCode> {
  const store = opts.store ?? fileApproverStore(dirname(opts.localBase));
  const audit = opts.audit;
  const record: Recorder = audit === undefined ? () => {} : (change) => recordApproverEvent(audit, change);
  // A parse error (an unknown or malformed option) is main's to report, with the command's usage.
  const parsed = parseArgs({
    args: removeIdAsPositional(args),
    options: parseOptions(APPROVERS_OPTIONS),
    allowPositionals: true,
    strict: true,
  });
  const [verb, ...more] = parsed.positionals;
  if (parsed.values.help === true || verb === undefined) {
    (verb === undefined && parsed.values.help !== true ? io.err : io.out)(`${HELP.approvers}\n`);
    return parsed.values.help === true ? 0 : 2;
  }
  try {
    if (verb === 'list' && more.length === 0) return await list(io, store);
    if (verb === 'remove' && more.length === 1) return await remove(io, store, more[0]!, record);
    if (verb === 'enroll' && more.length === 0) {
      const label = (parsed.values.name ?? userInfo().username).slice(0, 100) || 'approver';
      const subject = parsed.values.subject;
      if (subject !== undefined && (subject.trim() !== subject || subject === '' || subject.length > 256))
        throw new SkillsError(
          'CONFIG_INVALID',
          '--subject takes the sign-in subject (1 to 256 characters, no surrounding whitespace)',
        );
      return await enroll(io, store, { label, subject }, createLogger(opts.logLevel), record);
    }
  } catch (e) {
    if (!isSkillsError(e)) throw e;
    io.err(`skills-mcp approvers: ${e.message}${e.hint === undefined ? '' : `\n${e.hint}`}\n`);
    return 1;
  }
  io.err(
    `skills-mcp approvers: unknown use "${printable(parsed.positionals.join(' '))}"\n\n${HELP.approvers}\n`,
  );
  return 2;
}

/**
 * `remove ID` takes its ID as given, even one starting with `-` (credential ids are base64url, so some do): the first
 * word after `remove` that is neither an option of the command nor an option's value is moved behind `--`, where the
 * parser reads it as the ID.
 */
function removeIdAsPositional(args: string[]): string[] {
  if (args[0] !== 'remove') return args;
  const options = Object.entries(APPROVERS_OPTIONS) as [string, { type: string; short?: string }][];
  for (let i = 1; i < args.length; i++) {
    const a = args[i]!;
    if (a === '--' || !a.startsWith('-')) return args;
    const o = options.find(
      ([name, spec]) => a === `--${name}` || (spec.short !== undefined && a === `-${spec.short}`),
    );
    if (o !== undefined) {
      if (o[1].type === 'string') i++;
      continue;
    }
    if (options.some(([name]) => a.startsWith(`--${name}=`))) continue;
    return [...args.slice(0, i), ...args.slice(i + 1), '--', a];
  }
  return args;
}

async function list(io: CliIo, store: ApproverStore): Promise<ExitCode> {
  const all = await store.list();
  if (all.length === 0) io.err(`no passkeys enrolled (${store.where})\n`);
  for (const a of all)
    io.out(
      `${a.id}  ${printable(a.label)}${a.subject === undefined ? '' : `  subject ${printable(a.subject)}`}  enrolled ${a.enrolled_at}\n`,
    );
  return 0;
}

/** Records an enrolment or removal in the audit log (before approvers.json changes). */
type Recorder = (change: Parameters<typeof recordApproverEvent>[1]) => void;

async function remove(io: CliIo, store: ApproverStore, id: string, record: Recorder): Promise<ExitCode> {
  const all = await store.list();
  const hits = all.filter((a) => a.id === id || (id.length >= 6 && a.id.startsWith(id)));
  if (hits.length !== 1) {
    io.err(
      `skills-mcp approvers: ${hits.length === 0 ? 'no' : 'more than one'} passkey matches "${printable(id)}"\n`,
    );
    return 1;
  }
  record({ type: 'approver_removed', credential: hits[0]!, at: new Date() });
  await store.remove(hits[0]!.id);
  io.out(`removed ${hits[0]!.id} (${printable(hits[0]!.label)})\n`);
  return 0;
}

/** Serves the one-off enrolment page until one passkey is enrolled (or ten minutes pass). */
async function enroll(
  io: CliIo,
  store: ApproverStore,
  who: { label: string; subject: string | undefined },
  log: Logger,
  record: Recorder,
): Promise<ExitCode> {
  const { label } = who;
  const secret = randomBytes(24).toString('base64url');
  let origin = '';
  let enrolment: ReturnType<typeof createEnrolment> | undefined;
  // Set once a passkey is verified on this link: from then on it enrolls nothing more (the listener closes only a
  // moment later, and a second finish may be verifying meanwhile).
  let spent = false;
  let done: (label: string | undefined) => void = () => {};
  const finished = new Promise<string | undefined>((resolve) => (done = resolve));
  const route = async (req: RouteRequest): Promise<RouteResponse> => {
    if (req.path === '/console.css')
      return { status: 200, type: 'text/css; charset=utf-8', body: CONSOLE_CSS };
    if (req.path === '/passkey.js')
      return { status: 200, type: 'text/javascript; charset=utf-8', body: PASSKEY_JS };
    if (req.path === '/icon.svg') return { status: 200, type: 'image/svg+xml', body: CONSOLE_ICON };
    if (req.method !== 'POST')
      return req.path === '/'
        ? { status: 200, type: 'text/html; charset=utf-8', body: enrollPage(`/${secret}`, label) }
        : { status: 404, type: 'text/plain; charset=utf-8', body: 'Not found' };
    if (req.contentType?.split(';')[0]?.trim().toLowerCase() !== 'application/json')
      return json(415, { error: 'send JSON' });
    if (spent) return json(410, { error: USED_UP });
    if (req.path === '/enroll/options') {
      enrolment = createEnrolment({ ...who, origin, enrolled: await store.list() });
      return json(200, await enrolment.options());
    }
    if (req.path === '/enroll/finish' && enrolment !== undefined) {
      try {
        const credential = await enrolment.finish(JSON.parse(req.body ?? 'null'));
        if (spent) return json(410, { error: USED_UP });
        spent = true;
        try {
          record({ type: 'approver_enrolled', credential });
          await store.add(credential);
        } catch (err) {
          spent = false; // nothing was enrolled: the person may try again
          throw err;
        }
        // Stop once this answer has gone out (closing the listener drops the connections it holds).
        setTimeout(() => done(credential.id), 250);
        return json(200, { label });
      } catch (err) {
        return json(400, { error: isSkillsError(err) ? err.message : 'the passkey could not be verified' });
      }
    }
    return json(404, { error: 'start the enrolment again' });
  };
  const server = await startConsoleServer({ secret, log, route });
  const url = server.url.replace('//127.0.0.1:', '//localhost:');
  origin = new URL(url).origin;
  io.err(
    'Open this link in your browser to enroll a passkey (it works for this enrolment only; do not share it):\n' +
      `  ${url}\n`,
  );
  const timer = setTimeout(() => done(undefined), ENROLL_WAIT_MS);
  const id = await finished;
  clearTimeout(timer);
  await server.close();
  if (id === undefined) {
    io.err('skills-mcp approvers: no passkey was enrolled in time\n');
    return 1;
  }
  io.out(`enrolled ${id} (${printable(label)}) in ${store.where}\n`);
  return 0;
}
