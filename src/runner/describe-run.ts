import { explainMissing, findMissing } from '../envs/explain-missing.js';
import type { FinishStatus } from '../audit/call-payload-schemas.js';
import { quoteForDisplay as quoted } from '../escape-for-display.js';
import type { CallResult } from './call-result.js';
import type { LeftOut } from './collect-output.js';
import type { Finished } from './execute-call.js';
import { explainSandboxFailure, type RunGrants } from './explain-sandbox-failure.js';
import { renderJson } from './parse-bounded-json.js';
import { UNAPPLIED_FOLDER } from '../sandbox/keep-unapplied.js';
import { sessionFullText } from './session-folder-run.js';

const TAIL = 2000;

/**
 * A name the script chose, as it appears in a line the server writes: plain when it is only name characters,
 * else a JSON string with every control, bidi or invisible character escaped. A name can then never start a line
 * of its own (`a\nFiles: …`), pose as two entries (`a, b`) or act on the terminal of a person reading the result.
 */
const shownPath = (p: string): string => (/^[\w./@+=:-]+$/.test(p) ? p : quoted(p));
const tail = (s: string): string => (s.length > TAIL ? `…${s.slice(-TAIL)}` : s);

const LISTED = 50;
const LISTED_CHARS = 20_000;
/**
 * The first names of a list a run made (a run can change 20,000 files, each path up to 4,000 bytes), then how many
 * more: the result stays small for the model and the person.
 */
function listed<T>(items: readonly T[], show: (item: T) => string): string {
  const shown: string[] = [];
  let chars = 0;
  for (const item of items.slice(0, LISTED)) {
    const text = show(item);
    if (chars + text.length > LISTED_CHARS) break;
    shown.push(text);
    chars += text.length + 2;
  }
  const more = items.length - shown.length;
  return more > 0 ? `${shown.join(', ')}${shown.length > 0 ? ', ' : ''}… and ${more} more` : shown.join(', ');
}

/**
 * Turns a finished run into the result the model sees: JSON when there is one, stderr tail on failure. `installed`:
 * the version of a package the run imported but found lacking (see `missingPackageVersion`).
 */
export function describeRun(
  callId: string,
  status: FinishStatus,
  f: Finished,
  wallMs: number,
  skill = '',
  grants?: RunGrants,
  installed?: string,
): CallResult {
  const { result, output } = f;
  const stdout = result.stdout.toString('utf8');
  const stderr = result.stderr.toString('utf8').trim();
  const parts: string[] = [];
  if (f.sessionFull !== undefined) parts.push(sessionFullText(f.sessionFull));
  if (status === 'timeout')
    parts.push(`The run was stopped at the ${wallMs} ms time limit (kind: timeout). Partial output follows.`);
  if (status === 'cancelled') parts.push('The run was cancelled.');
  if (status === 'error') {
    parts.push(
      `The script failed with exit code ${result.exitCode ?? `null (signal ${result.signal ?? '?'})`}${result.oomKilled ? ' (out of memory)' : ''}.`,
    );
  }
  if (output.outputError !== undefined) parts.push(`The script's result was refused: ${output.outputError}.`);
  if (output.json !== undefined) parts.push(renderJson(output.json));
  else if (stdout.trim() !== '') parts.push(stdout);
  if (stderr !== '' && status !== 'ok') parts.push(`stderr (last ${TAIL} chars):\n${tail(stderr)}`);
  const missing = status === 'error' ? findMissing(stderr) : undefined;
  const why = missing === undefined ? undefined : explainMissing(missing, skill, installed);
  if (why !== undefined) parts.push(why);
  if (status === 'error' && grants !== undefined) parts.push(...explainSandboxFailure(stderr, grants));
  if (output.artifacts.length > 0)
    parts.push(`Files: ${output.artifacts.map((a) => `${shownPath(a.path)} (${a.bytes} bytes)`).join(', ')}`);
  if (output.leftOut.total > 0) parts.push(leftOutLine(output.leftOut));
  const ws = result.workspace;
  const names = (xs: string[]) => listed(xs, quoted);
  if (ws !== undefined && ws.applied && ws.written.length + ws.deleted.length > 0)
    parts.push(
      `Workspace: wrote ${names(ws.written) || 'nothing'}; deleted ${names(ws.deleted) || 'nothing'}`,
    );
  if (ws !== undefined && !ws.applied && ws.written.length + ws.deleted.length > 0)
    parts.push(
      `Workspace: the run failed, so none of its changes were applied. It would have written ${names(ws.written) || 'nothing'}; deleted ${names(ws.deleted) || 'nothing'}. What it wrote is among the call's files, under ${UNAPPLIED_FOLDER}/.`,
    );
  if (ws !== undefined && ws.refused.length > 0)
    parts.push(
      `Workspace changes not applied: ${listed(ws.refused, (r) => `${quoted(r.path)} (${r.reason})`)}`,
    );
  if (parts.length === 0) parts.push('(no output)');
  const code =
    f.sessionFull !== undefined
      ? 'SESSION_FOLDER_FULL'
      : output.outputError === undefined
        ? undefined
        : 'OUTPUT_REFUSED';
  return {
    callId,
    status,
    isError: status !== 'ok' || code !== undefined,
    ...(code === undefined ? {} : { code }),
    text: parts.join('\n\n'),
    ...(output.json === undefined ? {} : { json: output.json }),
    artifacts: output.artifacts,
    run: {
      exitCode: result.exitCode,
      durationMs: Math.round(result.durationMs),
      timedOut: result.timedOut,
      cancelled: result.cancelled,
      truncated: result.truncated.stdout || result.truncated.stderr,
    },
  };
}

/** One line, bounded however many entries were left out: the first few by name, then counts per reason. */
export function leftOutLine(l: LeftOut): string {
  const named = l.listed.map((r) => `${shownPath(r.path)} (${r.reason})`).join(', ');
  const rest = l.total - l.listed.length;
  if (rest === 0) return `Left out: ${named}`;
  const counts = Object.entries(l.counts)
    .map(([reason, n]) => `${n} ${reason}`)
    .join(', ');
  return `Left out: ${named}, and ${rest} more (${l.total} in all: ${counts})`;
}
