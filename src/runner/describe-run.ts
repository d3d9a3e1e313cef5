import type { FinishStatus } from '../audit/payload-schemas.js';
import type { CallResult } from './call-result.js';
import type { Finished } from './execute-call.js';

const TAIL = 2000;
const tail = (s: string): string => (s.length > TAIL ? `…${s.slice(-TAIL)}` : s);

/** Turns a finished run into the result the model sees: JSON when there is one, stderr tail on failure. */
export function describeRun(callId: string, status: FinishStatus, f: Finished, wallMs: number): CallResult {
  const { result, output } = f;
  const stdout = result.stdout.toString('utf8');
  const stderr = result.stderr.toString('utf8').trim();
  const parts: string[] = [];
  if (status === 'timeout')
    parts.push(`The run was stopped at the ${wallMs} ms time limit (kind: timeout). Partial output follows.`);
  if (status === 'cancelled') parts.push('The run was cancelled.');
  if (status === 'error') {
    parts.push(
      `The script failed with exit code ${result.exitCode ?? `null (signal ${result.signal ?? '?'})`}${result.oomKilled ? ' (out of memory)' : ''}.`,
    );
  }
  if (output.json !== undefined) parts.push(JSON.stringify(output.json, null, 2));
  else if (stdout.trim() !== '') parts.push(stdout);
  if (stderr !== '' && status !== 'ok') parts.push(`stderr (last ${TAIL} chars):\n${tail(stderr)}`);
  if (output.artifacts.length > 0)
    parts.push(`Files: ${output.artifacts.map((a) => `${a.path} (${a.bytes} bytes)`).join(', ')}`);
  if (output.refused.length > 0)
    parts.push(`Left out: ${output.refused.map((r) => `${r.path} (${r.reason})`).join(', ')}`);
  if (parts.length === 0) parts.push('(no output)');
  return {
    callId,
    status,
    isError: status !== 'ok',
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
