import { describe, expect, it } from 'vitest';
import { writeTestSkill } from '../helpers/gated-fixture.js';
import { approveEvery, gatedServers } from '../helpers/gated-server.js';
import { runCli } from '../helpers/run-cli.js';

describe('caps on concurrent sandboxed runs (built binary, real sandbox)', () => {
  const start = gatedServers();

  it('refuses runs past the per-session cap with a clear error, and records each refusal', async () => {
    const { fx, c } = await start('approval:\n  mode: ask\nruns:\n  max_per_session: 2\n  wait_ms: 0\n', {
      era: 'legacy',
      setup: (f) =>
        writeTestSkill(f.skills, 'sleeper', {
          description: 'Sleeps a few seconds. Use in tests.',
          script: 'import time\ntime.sleep(4)\nprint("{}")\n',
        }),
    });
    approveEvery(c);
    // The attack: many parallel runs from one session (each sandbox may use its profile's whole memory limit).
    const results = await Promise.all(
      Array.from({ length: 6 }, () => c.client.callTool({ name: 'sleeper', arguments: {} })),
    );
    const text = (r: (typeof results)[number]) => JSON.stringify(r.content);
    const busy = results.filter(
      (r) => r.isError === true && text(r).includes('not run: this session already runs'),
    );
    const ran = results.filter((r) => r.isError !== true);
    expect(ran.length).toBeGreaterThanOrEqual(1);
    expect(ran.length).toBeLessThanOrEqual(2);
    expect(busy.length).toBe(6 - ran.length);
    await c.close();
    const codes = runCli(['audit', 'export', '--jsonl', '--audit', fx.auditPath])
      .stdout.split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as { type: string; payload: { error_code?: string } })
      .filter((e) => e.type === 'tool_call_finished')
      .map((e) => e.payload.error_code);
    expect(codes.filter((code) => code === 'RUNS_BUSY')).toHaveLength(busy.length);
  });
});
