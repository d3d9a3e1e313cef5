import { execFileSync } from 'node:child_process';
import { CLI } from './spawn-server.js';

/** One event as `skills-mcp audit export --jsonl` prints it. */
export interface Exported {
  type: string;
  session_id: string;
  call_id: string | null;
  payload: Record<string, unknown>;
}

/** Every event of the audit log at `db`, read through the built binary's export. */
export const auditEvents = (db: string): Exported[] =>
  execFileSync(process.execPath, [CLI, 'audit', 'export', '--jsonl', '--audit', db], { encoding: 'utf8' })
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Exported & { record?: string })
    // The anchor and summary lines after the events carry `record`; events never do.
    .filter((l) => l.record === undefined);
