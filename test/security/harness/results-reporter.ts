/**
 * Prints the security results table after a vitest run (`npm run test:security`), from the rows each
 * case stores in `task.meta.security`. Also writes them as JSON when SKILLS_MCP_SECURITY_JSON names a file.
 */
import { writeFileSync } from 'node:fs';
import { cpus, hostname, release } from 'node:os';
import type { Reporter, TestModule } from 'vitest/node';
import type { SecurityRow } from './security-case.js';

const ORDER = ['filesystem', 'output', 'secrets', 'network', 'privilege', 'resources', 'adapter', 'install'];

export default class SecurityResultsReporter implements Reporter {
  onTestRunEnd(modules: ReadonlyArray<TestModule>): void {
    const rows: Array<SecurityRow & { failed: boolean }> = [];
    for (const m of modules) {
      for (const t of m.children.allTests()) {
        const row = t.meta().security;
        if (row !== undefined) rows.push({ ...row, failed: t.result().state === 'failed' });
        else if (t.result().state === 'failed') {
          rows.push({
            id: t.name.split(':')[0] ?? t.name,
            category: 'adapter',
            outcome: 'breach',
            note: 'test failed before judging (see the error above)',
            control: false,
            failed: true,
            context: { uid: -1, forced: false, limits: '?', memory: '?', pids: '?' },
          });
        }
      }
    }
    if (rows.length === 0) return;
    rows.sort(
      (a, b) =>
        ORDER.indexOf(a.category) - ORDER.indexOf(b.category) || Number(b.control) - Number(a.control),
    );
    const ctx = rows.find((r) => r.context.uid !== -1)?.context;
    const lines: string[] = [];
    const who = ctx === undefined ? '?' : ctx.uid === 0 ? 'root (uid 0)' : `uid ${ctx.uid}`;
    lines.push(
      '',
      `Security results — ${new Date().toISOString().slice(0, 10)}, ${hostname()}, Linux ${release()}, ${cpus().length} CPUs, Node ${process.version}`,
      `server: ${who}; adapter ${ctx?.forced === true ? 'FORCED UNAVAILABLE' : 'bwrap'}; limits layer: ${ctx?.limits ?? '?'} (memory ${ctx?.memory ?? '?'}, pids ${ctx?.pids ?? '?'})`,
      '',
    );
    const w = Math.max(...rows.map((r) => r.id.length), 4);
    lines.push(`${'case'.padEnd(w)}  ${'category'.padEnd(10)}  ${'outcome'.padEnd(11)}  note`);
    lines.push(`${'-'.repeat(w)}  ${'-'.repeat(10)}  ${'-'.repeat(11)}  ${'-'.repeat(40)}`);
    for (const r of rows) {
      const outcome = r.control ? (r.outcome === 'ok' ? 'ok (ctrl)' : r.outcome) : r.outcome;
      lines.push(
        `${r.id.padEnd(w)}  ${r.category.padEnd(10)}  ${(r.failed && r.outcome !== 'breach' ? 'FAILED' : outcome).padEnd(11)}  ${r.note}`,
      );
    }
    const count = (o: string) => rows.filter((r) => !r.control && r.outcome === o).length;
    const attacks = rows.filter((r) => !r.control).length;
    lines.push(
      '',
      `${attacks} attack cases: ${count('blocked')} blocked, ${count('contained')} contained, ${count('best-effort')} best-effort, ${count('denied')} denied, ${count('breach')} breach; ` +
        `${rows.filter((r) => r.control).length} controls; ${rows.filter((r) => r.failed).length} failed`,
      '',
    );
    process.stdout.write(`${lines.join('\n')}\n`);
    const jsonPath = process.env.SKILLS_MCP_SECURITY_JSON;
    if (jsonPath !== undefined && jsonPath !== '')
      writeFileSync(jsonPath, `${JSON.stringify(rows, null, 2)}\n`);
  }
}
