import { chmodSync, lstatSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { connectStdio } from '../helpers/stdio-client.js';
import { tempDir } from '../helpers/temp-dir.js';
import { isLinux, isRoot, parentOf, processes } from './helpers.js';

const temps: (() => void)[] = [];
afterAll(() => temps.splice(0).forEach((c) => c()));

/** A root-only folder (65534 cannot pass through it, so its skill's launchers are pre-staged) with the skill `probe`. */
function fixture() {
  const t = tempDir('skills-mcp-idle-launchers-');
  temps.push(t.cleanup);
  chmodSync(t.dir, 0o700);
  const skills = join(t.dir, 'skills');
  mkdirSync(join(skills, 'probe', 'scripts'), { recursive: true, mode: 0o755 });
  writeFileSync(
    join(skills, 'probe', 'SKILL.md'),
    '---\nname: probe\ndescription: Probe. Use in tests.\nentry_point: scripts/main.sh\ninput_schema:\n' +
      '  type: object\n  properties:\n    targets: { type: string, pattern: "^[0-9 ]*$" }\n' +
      '  required: [targets]\n---\n\nProbe.\n',
    { mode: 0o644 },
  );
  writeFileSync(
    join(skills, 'probe', 'scripts', 'main.sh'),
    // Asks, for each pid it is given, whether that process can be signalled from inside the sandbox.
    `#!/bin/bash
t="$(sed -E 's/.*"targets": *"([0-9 ]*)".*/\\1/')"
for p in $t; do echo "target $p: kill0=$(kill -0 $p 2>&1 && echo ok)"; done
`,
    { mode: 0o755 },
  );
  const config = join(t.dir, 'skills-mcp.yaml');
  writeFileSync(
    config,
    'approval:\n  mode: allow\n  fallback: rules-only\n  rules:\n    - { skill: probe, action: allow }\n',
  );
  return { dir: t.dir, args: ['--skills', skills, '--config', config, '--audit', join(t.dir, 'audit.db')] };
}

describe.skipIf(!isLinux || !isRoot)("a root server's idle launchers", () => {
  it('cannot be addressed by a sandboxed script, and holds no staged folder open to uid 65534', async () => {
    const f = fixture();
    const c = await connectStdio({ era: 'legacy', args: [...f.args, '--no-watch'], env: { HOME: f.dir } });
    const server = c.transport.pid!;
    const below = (pid: number): boolean => {
      for (let p: number | undefined = pid; p !== undefined && p > 1; p = parentOf(p))
        if (p === server) return true;
      return false;
    };
    try {
      for (let i = 0; i < 2; i++) {
        const r = await c.client.callTool({ name: 'probe', arguments: { targets: '' } });
        expect(r.isError, JSON.stringify(r)).not.toBe(true);
      }
      // Kept: the server pre-stages the next launchers after a call and logs nothing when they are up; a launcher
      // missing here would only weaken the check below (it is looked for again after the second pause).
      await new Promise((r) => setTimeout(r, 500));
      const launchers = processes().filter((p) => p.argv.includes('skills-mcp-launcher') && below(p.pid));
      // 1. From inside a sandbox (its own pid namespace) no launcher can be named: kill -0 says ESRCH.
      const r = await c.client.callTool({
        name: 'probe',
        arguments: { targets: launchers.map((p) => p.pid).join(' ') },
      });
      const out = (r.content as { text: string }[]).map((x) => x.text).join('\n');
      expect(out).toMatch(/target \d+: kill0=.*No such process/);
      expect(out).not.toMatch(/kill0=ok/);
      // 2. No idle process of uid 65534 (dumpable: /proc/<pid>/root is its own) sits in a stager's mount namespace:
      // any host process of that uid could reach the root-only staged folders through /proc/<pid>/root.
      // Kept: "no idle launcher is exposed" is a state over time; this gives one the chance to appear.
      await new Promise((res) => setTimeout(res, 500));
      const idle = processes().filter((p) => p.argv.includes('skills-mcp-launcher') && below(p.pid));
      const exposed = idle.filter((l) => {
        try {
          return (
            lstatSync(`/proc/${l.pid}/root`).uid === 65534 &&
            readFileSync(`/proc/${l.pid}/mountinfo`, 'utf8').includes('skills-mcp-stage-')
          );
        } catch {
          return false;
        }
      });
      expect(
        exposed.map((l) => ({ pid: l.pid, argv: l.argv.slice(0, 2) })),
        'idle 65534 launchers inside a stager',
      ).toEqual([]);
    } finally {
      await c.close();
    }
  }, 60_000);
});
