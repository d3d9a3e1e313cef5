import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { gatedFixture, type GatedFixture } from '../helpers/gated-fixture.js';
import { connectClient, type Connected } from './helpers/connect-client.js';
import { servedUrl, spawnCli, type SpawnedServer } from './helpers/spawn-server.js';

const TOKEN = 'shared-state-key-test-token-0123456789';
const APPROVE = { approval: { action: 'accept', content: { decision: 'approved' } } };
const ASKED = { name: 'echo', arguments: { text: 'across replicas' } };

type Raw = {
  requestState?: string;
  isError?: boolean;
  content?: { text?: string }[];
  _meta?: Record<string, unknown>;
};

/** A modern-era tools/call answered by hand, so its retry can be sent to another server. */
async function call(c: Client, retry?: { state: string }): Promise<Raw> {
  const params =
    retry === undefined ? ASKED : { ...ASKED, inputResponses: APPROVE, requestState: retry.state };
  return (await c.request(
    { method: 'tools/call', params } as never,
    { allowInputRequired: true } as never,
  )) as Raw;
}

const writeKey = (path: string, hex: string, mode = 0o600) => {
  writeFileSync(path, `${hex}\n`, { mode });
  chmodSync(path, mode);
  return path;
};

describe('two server processes sharing a state key file (modern era over HTTP)', () => {
  let fx: GatedFixture;
  const servers: SpawnedServer[] = [];
  const clients: Connected[] = [];
  const keyA = randomBytes(32).toString('hex');
  const keyC = randomBytes(32).toString('hex');
  let a: Connected, b: Connected, c: Connected;

  const start = async (name: string, keyFile: string): Promise<Connected> => {
    const s = spawnCli(
      [
        '--http',
        '--port',
        '0',
        '--skills',
        fx.skills,
        '--config',
        fx.configFile,
        '--no-watch',
        '--audit',
        join(fx.dir, `audit-${name}`, 'audit.db'),
        '--log-level',
        'trace',
      ],
      { SKILLS_MCP_TOKEN: TOKEN, SKILLS_MCP_STATE_KEY_FILE: keyFile },
    );
    servers.push(s);
    const conn = await connectClient(await servedUrl(s), 'auto', TOKEN);
    clients.push(conn);
    return conn;
  };

  beforeAll(async () => {
    fx = gatedFixture('approval:\n  mode: ask\n');
    const shared = writeKey(join(fx.dir, 'state.key'), keyA);
    const other = writeKey(join(fx.dir, 'other.key'), keyC);
    [a, b, c] = await Promise.all([start('a', shared), start('b', shared), start('c', other)]);
  });

  afterAll(async () => {
    for (const conn of clients) await conn.client.close().catch(() => undefined);
    for (const s of servers) {
      if (s.proc.exitCode === null && s.proc.signalCode === null) s.proc.kill('SIGTERM');
      await s.exited;
    }
    fx?.cleanup();
  });

  it("accepts server A's signed state on server B, which reports the approval as not pending there", async () => {
    const first = await call(a.client);
    expect(first.requestState).toBeTypeOf('string');
    const onB = await call(b.client, { state: first.requestState! });
    expect(onB.isError).toBe(true);
    expect(onB._meta?.['skills-mcp/code']).toBe('APPROVAL_DENIED');
    const text = onB.content?.map((x) => x.text ?? '').join('') ?? '';
    expect(text).toMatch(/no longer pending here/);
    expect(text).toMatch(/another server process \(replica\) asked it/);
    expect(text).toMatch(/Nothing was run/);
    // The state was genuine: the same retry on A runs the approved call.
    const onA = await call(a.client, { state: first.requestState! });
    expect(onA.isError, JSON.stringify(onA)).toBeFalsy();
    expect(JSON.stringify(onA.content)).toContain('across replicas');
  });

  it('refuses the state as forged on a server with another key, and runs nothing', async () => {
    const first = await call(a.client);
    expect(first.requestState).toBeTypeOf('string');
    const err = await call(c.client, { state: first.requestState! }).then(
      () => undefined,
      (e: unknown) => e as { code?: number; message?: string },
    );
    expect(err?.code).toBe(-32602);
    expect(err?.message).toMatch(/Invalid or expired requestState/);
  });

  it('never writes the key to a log or an audit file', () => {
    const keyB64 = Buffer.from(keyA, 'hex').toString('base64');
    for (const s of servers) {
      expect(s.stderr()).toContain('approval round trips signed with the shared state key');
      expect(s.stderr()).not.toContain(keyA);
      expect(s.stderr()).not.toContain(keyC);
      expect(s.stderr()).not.toContain(keyB64);
    }
    // Only A ran a call, so only A opened its audit log (B and C answered before the runner wrote anything).
    const dir = join(fx.dir, 'audit-a');
    const files = readdirSync(dir, { recursive: true, withFileTypes: true }).filter((e) => e.isFile());
    expect(files.map((e) => e.name)).toContain('audit.db');
    for (const e of files) {
      const bytes = readFileSync(join(e.parentPath, e.name));
      expect(bytes.includes(keyA), e.name).toBe(false);
      expect(bytes.includes(Buffer.from(keyA, 'hex')), e.name).toBe(false);
    }
  });
});

describe('a bad state key file', () => {
  let fx: GatedFixture;
  beforeAll(() => {
    fx = gatedFixture('approval:\n  mode: ask\n');
  });
  afterAll(() => fx?.cleanup());

  const key = randomBytes(32).toString('hex');
  it.each<[string, (path: string) => void, RegExp]>([
    ['missing', () => undefined, /cannot read .*missing\.key: ENOENT/],
    [
      'too short',
      (p) => writeKey(p, randomBytes(16).toString('hex')),
      /holds 16 bytes; at least 32 are needed/,
    ],
    [
      'readable by others',
      (p) => writeKey(p, key, 0o604),
      /is open to other users \(mode 604; chmod 600 it\)/,
    ],
    ['writable by its group', (p) => writeKey(p, key, 0o620), /is open to other users \(mode 620/],
    ['not hex', (p) => writeKey(p, Buffer.from(key, 'hex').toString('base64')), /must hold the key as hex/],
    ['a folder', (p) => mkdirSync(p, { mode: 0o700 }), /is not a regular file/],
    // Opening a FIFO for reading used to wait for a writer before any check, and no signal could stop the wait.
    ['a FIFO', (p) => execFileSync('mkfifo', ['-m', '600', p]), /is not a regular file/],
  ])('exits 2 with a path: message line when it is %s', async (what, make, message) => {
    const file = join(fx.dir, what === 'missing' ? 'missing.key' : `${what.replaceAll(' ', '-')}.key`);
    make(file);
    const s = spawnCli([
      '--http',
      '--port',
      '0',
      '--skills',
      fx.skills,
      '--no-watch',
      '--state-key-file',
      file,
    ]);
    expect(await s.exited).toBe(2);
    const err = s.stderr();
    expect(err).toMatch(/^skills-mcp: invalid configuration\n {2}http\.state_key_file: /);
    expect(err).toMatch(message);
    expect(err).not.toContain(key);
    expect(err).not.toMatch(/serving/);
  });
});
