import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openAuditStore } from '../../src/audit/open-audit-store.js';
import { connectStdio, type Connected } from '../helpers/stdio-client.js';
import { repoRoot, tempDir } from '../helpers/temp-dir.js';
import { waitFor } from '../helpers/wait-for.js';

type Text = { type: 'text'; text: string };
const ALLOW_ALL = 'approval:\n  mode: allow\n  fallback: rules-only\n  high_risk: ask\n';
const ENV_CANARY = 'ENV-CANARY-7f3a9c';
const INPUT_CANARY = 'INPUT-CANARY-b81d44';

function skill(root: string, name: string, script: string, body: string, extra = '') {
  mkdirSync(join(root, name, 'scripts'), { recursive: true });
  writeFileSync(
    join(root, name, 'SKILL.md'),
    `---\nname: ${name}\ndescription: Test skill ${name}.\nentry_point: scripts/${script}\n${extra}---\n\nTest.\n`,
  );
  writeFileSync(join(root, name, 'scripts', script), body);
}

describe('sandboxed runs through the server (policy allows, no approval asked)', () => {
  const t = tempDir();
  const skills = join(t.dir, 'skills');
  const auditPath = join(t.dir, 'state', 'audit.db');
  let c: Connected;

  beforeAll(async () => {
    skill(
      skills,
      'fails',
      'main.py',
      'import sys\nprint("partial")\nprint("something broke: bad input", file=sys.stderr)\nsys.exit(1)\n',
    );
    skill(
      skills,
      'slow',
      'main.py',
      'import sys, time\nprint("started", flush=True)\ntime.sleep(60)\n',
      'timeout: 1\n',
    );
    skill(skills, 'sleeper', 'main.sh', 'echo begun\nsleep 60\n');
    skill(
      skills,
      'envdump',
      'main.py',
      'import json, os, sys\ndata = sys.stdin.read()\nprint(json.dumps({"env": sorted(os.environ), "has_canary": any("CANARY" in v for v in os.environ.values() if "INPUT" not in v)}))\n',
    );
    writeFileSync(join(t.dir, 'skills-mcp.yaml'), ALLOW_ALL);
    const bundled = join(t.dir, 'bundled');
    mkdirSync(bundled);
    for (const s of ['csv-stats', 'markdown-report']) {
      const src = join(repoRoot, 'skills', s);
      const copy = (from: string, to: string) => {
        mkdirSync(to, { recursive: true });
        for (const e of readdirSync(from, { withFileTypes: true })) {
          if (e.isDirectory()) copy(join(from, e.name), join(to, e.name));
          else writeFileSync(join(to, e.name), readFileSync(join(from, e.name)));
        }
      };
      copy(src, join(bundled, s));
    }
    c = await connectStdio({
      era: 'legacy',
      args: [
        '--skills',
        skills,
        '--skills',
        bundled,
        '--config',
        join(t.dir, 'skills-mcp.yaml'),
        '--audit',
        auditPath,
        '--no-watch',
      ],
      env: { SECRET_TOKEN: ENV_CANARY, LANG: 'C.UTF-8' },
    });
  });
  afterAll(async () => {
    await c.close();
    t.cleanup();
  });

  it('runs the bundled Python skill and returns its statistics as structured content', async () => {
    const input = JSON.parse(
      readFileSync(join(repoRoot, 'skills/csv-stats/assets/example-input.json'), 'utf8'),
    ) as Record<string, unknown>;
    const r = await c.client.callTool({ name: 'csv-stats', arguments: input });
    expect(r.isError).toBeFalsy();
    expect(r.structuredContent).toMatchObject({
      rows: 8,
      columns: expect.arrayContaining([expect.objectContaining({ name: 'units', missing: 1 })]),
    });
  });

  it('runs the bundled Node skill and returns its report files as links and embedded text', async () => {
    const input = JSON.parse(
      readFileSync(join(repoRoot, 'skills/markdown-report/assets/example-input.json'), 'utf8'),
    ) as Record<string, unknown>;
    const r = await c.client.callTool({ name: 'markdown-report', arguments: input });
    expect(r.isError).toBeFalsy();
    const blocks = r.content as { type: string; uri?: string; resource?: { uri: string; text?: string } }[];
    const links = blocks.filter((b) => b.type === 'resource_link').map((b) => b.uri!);
    expect(links.some((u) => /^skill-run:\/\/[0-9a-f-]+\/report\.md$/.test(u))).toBe(true);
    const md = blocks.find((b) => b.type === 'resource' && b.resource!.uri.endsWith('report.md'));
    expect(md?.resource?.text).toContain('#');
    const read = await c.client.readResource({ uri: links.find((u) => u.endsWith('report.md'))! });
    expect((read.contents[0] as { text: string }).text).toBe(md!.resource!.text);
  });

  it('answers a script that exits 1 with isError, the exit code and the stderr tail', async () => {
    const r = await c.client.callTool({ name: 'fails', arguments: {} });
    expect(r.isError).toBe(true);
    const text = (r.content as Text[])[0]!.text;
    expect(text).toContain('exit code 1');
    expect(text).toContain('something broke: bad input');
    expect(text).toContain('partial');
  });

  it('stops a run at its time limit with kind timeout and the partial output', async () => {
    const r = await c.client.callTool({ name: 'slow', arguments: {} });
    expect(r.isError).toBe(true);
    const text = (r.content as Text[])[0]!.text;
    expect(text).toContain('kind: timeout');
    expect(text).toContain('started');
    expect((r._meta as Record<string, unknown>)['skills-mcp/status']).toBe('timeout');
  });

  it('kills the run when the client cancels the request', async () => {
    const controller = new AbortController();
    const pending = c.client.callTool({ name: 'sleeper', arguments: {} }, { signal: controller.signal });
    setTimeout(() => controller.abort(), 1500);
    await expect(pending).rejects.toThrow();
    const store = openAuditStore({ path: auditPath, readOnly: true });
    try {
      const row = await waitFor(
        () => store.listCalls({ skill: 'sleeper' }).find((r) => r.status === 'cancelled'),
        10_000,
        'the cancelled row',
      ).catch(() => store.listCalls({ skill: 'sleeper' })[0]);
      expect(row?.status).toBe('cancelled');
      expect(row?.durationMs ?? Infinity).toBeLessThan(30_000);
    } finally {
      store.close();
    }
  });

  it('sends progress notifications (start, output, end) when the client asks for them', async () => {
    const seen: string[] = [];
    const before = c.progressInTime().length;
    const r = await c.client.callTool(
      { name: 'envdump', arguments: {} },
      {
        onprogress: (p) => {
          seen.push(p.message ?? '');
        },
      },
    );
    expect(r.isError).toBeFalsy();
    // What the server sent before the result, read off the wire: the SDK client may drop a notification that came in
    // the same chunk as the response (see `watchProgressOrder`), so the client's own list can lack the last one.
    const sent = c.progressInTime().slice(before);
    expect(sent[0]).toMatch(/^running scripts\/main.py/);
    expect(sent).toContain('output received');
    expect(sent.at(-1)).toBe('finished: ok');
    expect(seen[0]).toMatch(/^running scripts\/main.py/);
    expect(sent.slice(0, seen.length)).toEqual(seen);
    expect(c.errors).toEqual([]);
  });

  it("never passes the server's env to a script, and never stores env or input values in the audit log", async () => {
    const r = await c.client.callTool({ name: 'envdump', arguments: { note: INPUT_CANARY } });
    const out = r.structuredContent as { env: string[]; has_canary: boolean };
    expect(out.env).not.toContain('SECRET_TOKEN');
    expect(out.has_canary).toBe(false);
    await c.client.callTool({ name: 'read_skill_file', arguments: { skill: 'envdump', path: 'SKILL.md' } });
    // The read-only call's record lands after its answer: wait for it before reading the files' bytes.
    const store = openAuditStore({ path: auditPath, readOnly: true });
    try {
      await waitFor(
        () =>
          store
            .listCalls({ skill: 'envdump' })
            .some((row) => row.tool === 'read_skill_file' && row.status !== undefined && row.status !== null),
        10_000,
        'the read_skill_file record',
      );
    } finally {
      store.close();
    }
    const dir = join(t.dir, 'state');
    for (const f of readdirSync(dir).filter((n) => n.startsWith('audit.db'))) {
      const bytes = readFileSync(join(dir, f));
      expect(bytes.includes(ENV_CANARY), f).toBe(false);
      expect(bytes.includes(INPUT_CANARY), f).toBe(false);
    }
  });

  it('gives every call exactly one terminal event and a verifying chain', () => {
    const store = openAuditStore({ path: auditPath, readOnly: true });
    try {
      expect(store.verify().ok).toBe(true);
      for (const call of store.listCalls()) {
        if (call.skill === 'sleeper') continue;
        const detail = store.getCall(call.callId)!;
        const terminal = detail.events.filter(
          (e) => e.type === 'tool_call_finished' || e.type === 'tool_call_interrupted',
        );
        expect(terminal, call.callId).toHaveLength(1);
      }
    } finally {
      store.close();
    }
  });

  it('keeps the log consistent under 20 concurrent calls', async () => {
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        c.client.callTool({ name: 'envdump', arguments: { note: `n${i}` } }),
      ),
    );
    expect(results.every((r) => !r.isError)).toBe(true);
    const store = openAuditStore({ path: auditPath, readOnly: true });
    try {
      expect(store.verify().ok).toBe(true);
      const calls = store
        .listCalls({ skill: 'envdump' })
        .filter((r) => r.state === 'finished' && r.status === 'ok');
      expect(calls.length).toBeGreaterThanOrEqual(21);
      const before = store.snapshotProjections();
      expect(before.calls.length).toBeGreaterThan(0);
    } finally {
      store.close();
    }
  });
});
