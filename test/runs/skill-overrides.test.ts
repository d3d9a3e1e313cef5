import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeTestSkill, type GatedFixture } from '../helpers/gated-fixture.js';
import { gatedServers } from '../helpers/gated-server.js';
import { runCli } from '../helpers/run-cli.js';
import type { Connected } from '../helpers/stdio-client.js';
import { tempDir } from '../helpers/temp-dir.js';
import { textOf } from '../helpers/text-of.js';

const sha256 = (s: string) => createHash('sha256').update(s, 'utf8').digest('hex');

/** A skill from a collection the user does not own: its frontmatter asks for nothing, yet it writes the workspace. */
const SCRIBE = `import os
path = os.path.join(os.environ["SKILL_WORKSPACE"], "report.txt")
open(path, "w").write("written by scribe\\n")
print('{"wrote": "report.txt"}')
`;

/** Asks for the network in its frontmatter; reaches a loopback listener of the test's host, or fails to resolve. */
const FETCHER = `import json, socket, sys
port = json.load(sys.stdin)["port"]
try:
    socket.create_connection(("127.0.0.1", port), timeout=5).close()
    print(json.dumps({"reached": True}))
except OSError as e:
    print("host loopback not reachable:", e, file=sys.stderr)
    socket.getaddrinfo("skills-mcp-test.invalid", 80)
`;

const ASK = 'approval:\n  mode: ask\n';

function addSkills(fx: GatedFixture): void {
  writeTestSkill(fx.skills, 'scribe', { description: 'Writes a report. Use in tests.', script: SCRIBE });
  writeTestSkill(fx.skills, 'fetcher', {
    description: 'Fetches from the host. Use in tests.',
    frontmatter: 'network: full\n',
    script: FETCHER,
  });
  mkdirSync(join(fx.dir, 'ws'));
}
const workspaceArgs = (fx: GatedFixture) => ['--workspace', join(fx.dir, 'ws')];

/** Approves every form and keeps its text. */
function approveAndKeep(c: Connected): string[] {
  const messages: string[] = [];
  c.client.setRequestHandler('elicitation/create', (req) => {
    messages.push((req.params as { message: string }).message);
    return Promise.resolve({ action: 'accept', content: { decision: 'approved' } });
  });
  return messages;
}

const callIdOf = (r: { _meta?: unknown }) => (r._meta as Record<string, string>)['skills-mcp/call_id']!;

describe('operator overrides per skill (skill_overrides in skills-mcp.yaml), through the server', () => {
  const start = gatedServers();
  let listener: Server;
  let port: number;

  beforeAll(async () => {
    listener = createServer((s) => s.end());
    await new Promise<void>((r) => listener.listen(0, '127.0.0.1', r));
    port = (listener.address() as { port: number }).port;
  });
  afterAll(() => new Promise<void>((r) => listener.close(() => r())));

  it('leaves the workspace read-only without one, and the hint names the setting to add', async () => {
    const { fx, c } = await start(ASK, { setup: addSkills, args: workspaceArgs });
    const messages = approveAndKeep(c);
    const r = await c.client.callTool({ name: 'scribe', arguments: {} });
    expect(r.isError).toBe(true);
    expect(textOf(r)).toContain('Read-only file system');
    expect(textOf(r)).toContain('`skill_overrides.scribe.workspace: write` in skills-mcp.yaml');
    expect(existsSync(join(fx.dir, 'ws', 'report.txt'))).toBe(false);
    expect(messages[0]).not.toContain('set by the operator');
  });

  it('grants workspace writes with workspace: write, says in the form it is the operator’s, and the write lands', async () => {
    const { fx, c } = await start(`${ASK}skill_overrides:\n  scribe: { workspace: write }\n`, {
      setup: addSkills,
      args: workspaceArgs,
    });
    const messages = approveAndKeep(c);
    const r = await c.client.callTool({ name: 'scribe', arguments: {} });
    expect(r.isError, textOf(r)).toBeFalsy();
    expect(readFileSync(join(fx.dir, 'ws', 'report.txt'), 'utf8')).toBe('written by scribe\n');
    // Asked once (an override never skips the approval), with the grant and its source on the form.
    expect(messages).toHaveLength(1);
    const message = messages[0]!;
    expect(message).toMatch(/^Workspace: write \(set by the operator in skills-mcp\.yaml\)$/m);
    expect(message).toMatch(/^Risk: +MEDIUM \(requests-workspace-write\)$/m);
    expect(message).toContain('may write to the workspace (granted by the operator)');
    expect(message).toMatch(new RegExp(`^Writes: .*${join(fx.dir, 'ws').replace(/[/.]/g, '\\$&')}$`, 'm'));
    await c.close();
    // The audit log's digest of what was shown is the digest of that text.
    const store = fx.audit();
    const asked = store.getCall(callIdOf(r))?.events.find((e) => e.type === 'approval_requested');
    store.close();
    expect(asked?.payload).toMatchObject({ shown: { message_sha256: sha256(message) } });
  });

  it('narrows the network a skill asks for with network: none, and the hint names the override', async () => {
    // As the skill asks: the host's loopback listener is reachable.
    const open = await start(ASK, { setup: addSkills });
    approveAndKeep(open.c);
    const reached = await open.c.client.callTool({ name: 'fetcher', arguments: { port } });
    expect(reached.isError, textOf(reached)).toBeFalsy();
    expect(reached.structuredContent).toEqual({ reached: true });

    const { fx, c } = await start(`${ASK}skill_overrides:\n  fetcher: { network: none }\n`, {
      setup: addSkills,
    });
    const messages = approveAndKeep(c);
    const r = await c.client.callTool({ name: 'fetcher', arguments: { port } });
    expect(r.isError).toBe(true);
    expect(textOf(r)).toContain('host loopback not reachable');
    expect(textOf(r)).toContain(
      'the operator set `skill_overrides.fetcher.network: none` in skills-mcp.yaml',
    );
    expect(messages[0]).toMatch(/^Sandbox: +profile default, network none$/m);
    expect(messages[0]).toMatch(/^Network: none \(set by the operator in skills-mcp\.yaml\)$/m);
    await c.close();
    const store = fx.audit();
    const started = store.getCall(callIdOf(r))?.events.find((e) => e.type === 'tool_call_started');
    store.close();
    expect(started?.payload).toMatchObject({ sandbox: { network: 'none' } });
  });

  it('warns on stderr about an override for a skill that is not loaded, and serves', async () => {
    const { c } = await start(`${ASK}skill_overrides:\n  not-here: { network: none }\n`);
    expect((await c.client.listTools()).tools.map((t) => t.name)).toContain('echo');
    expect(c.stderr()).toMatch(/"skill":"not-here".*skill_overrides names a skill that is not loaded/);
  });
});

describe('skills-mcp list and skill_overrides', () => {
  it('shows what each overridden skill runs with, and which settings are the operator’s', () => {
    const t = tempDir();
    try {
      const skills = join(t.dir, 'skills');
      writeTestSkill(skills, 'scribe', { description: 'Writes a report.', script: SCRIBE });
      writeTestSkill(skills, 'fetcher', {
        description: 'Fetches.',
        frontmatter: 'network: full\n',
        script: FETCHER,
      });
      const config = join(t.dir, 'skills-mcp.yaml');
      writeFileSync(
        config,
        'skill_overrides:\n  scribe: { workspace: write, packages: { python: [pypdf] } }\n  fetcher: { network: none }\n',
      );
      const r = runCli(['list', '--skills', skills, '--config', config]);
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout).toContain('Runs with (skill_overrides in skills-mcp.yaml):');
      expect(r.stdout).toContain('  scribe: workspace write (operator), network none, profile default');
      expect(r.stdout).toContain('  fetcher: workspace read, network none (operator), profile default');
      const json = JSON.parse(runCli(['list', '--json', '--skills', skills, '--config', config]).stdout) as {
        skills: { name: string; runsWith: unknown; dependencies: { python: string[] } }[];
      };
      const fetcher = json.skills.find((s) => s.name === 'fetcher')!;
      expect(fetcher.runsWith).toEqual({
        workspace: { value: 'read', source: 'default' },
        network: { value: 'none', source: 'operator' },
        profile: { value: 'default', source: 'default' },
      });
      // The override's packages are the skill's declared packages, as dependencies.skills.<name> would be.
      expect(json.skills.find((s) => s.name === 'scribe')!.dependencies.python).toEqual(['pypdf']);
    } finally {
      t.cleanup();
    }
  });
});

describe('invalid skill_overrides', () => {
  it.each([
    ['workspace: writ', 'skill_overrides.docx.workspace: expected one of none, read, write'],
    ['network: partial', 'skill_overrides.docx.network: expected one of none, full'],
    ['profile: Network', 'skill_overrides.docx.profile: expected a profile name (a-z, 0-9, -)'],
    ['writes: true', 'skill_overrides.docx: Unrecognized key: "writes"'],
    ['packages: { python: pypdf }', 'skill_overrides.docx.packages.python:'],
  ])('exits 2 on `%s` with a path: message line naming the key', (setting, line) => {
    const t = tempDir();
    try {
      mkdirSync(join(t.dir, 'skills'));
      const config = join(t.dir, 'skills-mcp.yaml');
      writeFileSync(config, `skill_overrides:\n  docx: { ${setting} }\n`);
      const r = runCli(['--skills', join(t.dir, 'skills'), '--config', config]);
      expect(r.code).toBe(2);
      expect(r.stderr).toContain(`${config}: ${line}`);
    } finally {
      t.cleanup();
    }
  });
});
