/**
 * The built server binary for the cases about what the server reads back from a run: spawned over loopback HTTP
 * (so several sessions can talk to it at once), with real MCP clients. In forced mode it runs in a private mount
 * namespace where /usr/bin/bwrap is /dev/null, which is what "no sandbox available" looks like to the real
 * binary: every call must then end in SANDBOX_DENIED (no production code reads a test switch).
 */
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { SkillsError } from '../../../src/errors.js';
import { FORCED } from './security-case.js';

export const CLI = resolve(import.meta.dirname, '../../../dist/cli.js');
const ALLOW_ALL = 'approval:\n  mode: allow\n  fallback: rules-only\n';

/** Wraps a command so that, in forced mode, it sees no usable bwrap. */
export function forcedPrefix(): string[] {
  if (!FORCED) return [];
  const hide = ['/usr/bin/bwrap', '/usr/local/bin/bwrap'].filter((p) => existsSync(p));
  return [
    '/usr/bin/bwrap',
    '--die-with-parent',
    '--dev-bind',
    '/',
    '/',
    ...hide.flatMap((p) => ['--ro-bind', '/dev/null', p]),
    '--',
  ];
}

export interface SkillSpec {
  /** Python source of scripts/main.py. */
  main: string;
  /** Extra files in the skill folder. */
  files?: Record<string, string>;
  /** The name in the frontmatter (defaults to the folder name). */
  name?: string;
}

/** Writes a skills folder: one folder per skill with SKILL.md and scripts/main.py. */
export function writeSkills(root: string, skills: Record<string, SkillSpec>): void {
  for (const [dir, s] of Object.entries(skills)) {
    mkdirSync(join(root, dir, 'scripts'), { recursive: true });
    writeFileSync(
      join(root, dir, 'SKILL.md'),
      `---\nname: ${JSON.stringify(s.name ?? dir)}\ndescription: Security case ${dir}.\nentry_point: scripts/main.py\n---\n\nTest.\n`,
    );
    writeFileSync(join(root, dir, 'scripts', 'main.py'), s.main);
    for (const [rel, body] of Object.entries(s.files ?? {})) writeFileSync(join(root, dir, rel), body);
  }
}

export interface Served {
  url: string;
  proc: ChildProcess;
  /** Folder holding the audit log and the runs folder. */
  state: string;
  stderr(): string;
  connect(): Promise<Session>;
  close(): Promise<void>;
}

export interface CallOutcome {
  isError: boolean;
  code: string | undefined;
  callId: string | null;
  text: string;
  /** Every text the result carries (content, embedded resources, structured content). */
  all: string;
  links: string[];
}

export interface Session {
  client: Client;
  /** Calls a skill's tool. SANDBOX_DENIED is thrown as the SkillsError the harness counts as "denied". */
  call(tool: string, args?: Record<string, unknown>): Promise<CallOutcome>;
  /** resources/read: the text or decoded blob, or the error message. */
  read(uri: string): Promise<{ ok: boolean; text: string }>;
  close(): Promise<void>;
}

/** Starts the binary with `skills` (a folder) and `extraEnv`; `wrap` prefixes the command (e.g. a tracer). */
export async function startServer(o: {
  skills: string;
  state: string;
  env?: Record<string, string>;
  wrap?: string[];
  /** Extra `serve` flags (e.g. `--workspace DIR`). */
  args?: string[];
  /** skills-mcp.yaml content (default: allow every call without asking). */
  config?: string;
}): Promise<Served> {
  if (!existsSync(CLI)) throw new Error(`${CLI} is missing: run \`npm run build\` first`);
  mkdirSync(o.state, { recursive: true });
  const config = join(o.state, 'skills-mcp.yaml');
  writeFileSync(config, o.config ?? ALLOW_ALL);
  const argv = [
    ...(o.wrap ?? []),
    ...forcedPrefix(),
    process.execPath,
    CLI,
    'serve',
    '--http',
    '--host',
    '127.0.0.1',
    '--port',
    '0',
    '--skills',
    o.skills,
    '--config',
    config,
    '--audit',
    join(o.state, 'audit.db'),
    '--no-watch',
    ...(o.args ?? []),
  ];
  const proc = spawn(argv[0]!, argv.slice(1), {
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: o.state, LANG: 'C.UTF-8', ...o.env },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let err = '';
  proc.stderr.setEncoding('utf8').on('data', (d: string) => (err += d));
  const exited = new Promise<number | null>((r) => proc.once('exit', (code) => r(code)));
  let url: string | undefined;
  while (url === undefined) {
    url = /over Streamable HTTP at (http:\/\/\S+\/mcp)/.exec(err)?.[1];
    if (url !== undefined) break;
    const code = await Promise.race([exited, new Promise<'wait'>((r) => setTimeout(() => r('wait'), 50))]);
    if (code !== 'wait') throw new Error(`server exited (${code}) before listening:\n${err}`);
  }
  const served: Served = {
    url,
    proc,
    state: o.state,
    stderr: () => err,
    connect: () => connect(url),
    async close() {
      if (proc.exitCode === null && proc.signalCode === null) {
        proc.kill('SIGTERM');
        const t = setTimeout(() => proc.kill('SIGKILL'), 5000);
        await exited;
        clearTimeout(t);
      }
    },
  };
  return served;
}

type Content = { type: string; text?: string; uri?: string; resource?: { text?: string } };

async function connect(url: string): Promise<Session> {
  const client = new Client({ name: 'security-suite', version: '1.0.0' }, { capabilities: {} });
  await client.connect(new StreamableHTTPClientTransport(new URL(url)));
  return {
    client,
    async call(tool, args = {}) {
      const r = await client.callTool({ name: tool, arguments: args }, { timeout: 120_000 });
      const meta = (r._meta ?? {}) as Record<string, unknown>;
      const code = typeof meta['skills-mcp/code'] === 'string' ? meta['skills-mcp/code'] : undefined;
      const content = (r.content ?? []) as Content[];
      const text = content
        .filter((c) => c.type === 'text')
        .map((c) => c.text ?? '')
        .join('\n');
      if (code === 'SANDBOX_DENIED') throw new SkillsError('SANDBOX_DENIED', text);
      const all = [
        text,
        ...content.map((c) => c.resource?.text ?? ''),
        JSON.stringify(r.structuredContent ?? null),
      ].join('\n');
      return {
        isError: r.isError === true,
        code,
        callId: typeof meta['skills-mcp/call_id'] === 'string' ? meta['skills-mcp/call_id'] : null,
        text,
        all,
        links: content.filter((c) => c.type === 'resource_link').map((c) => c.uri ?? ''),
      };
    },
    async read(uri) {
      try {
        const r = await client.readResource({ uri });
        const c = r.contents[0] as { text?: string; blob?: string } | undefined;
        const text =
          c?.text ?? (c?.blob === undefined ? '' : Buffer.from(c.blob, 'base64').toString('latin1'));
        return { ok: true, text };
      } catch (e) {
        return { ok: false, text: String((e as Error).message) };
      }
    },
    close: () => client.close(),
  };
}
