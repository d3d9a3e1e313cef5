import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRawServer, type RawEra, type RawServer } from '../helpers/raw-stdio.js';
import { waitFor } from '../helpers/wait-for.js';
import { repoRoot } from '../helpers/temp-dir.js';
import { runCli } from '../helpers/run-cli.js';

const bundled = `${repoRoot}/skills`;
const MiB = 1024 * 1024;
const DEFAULT_LIMIT = 16 * MiB;
const LONG = 600_000;

/** Streams `bytes` of 'a' in 1 MiB chunks (the test holds one chunk, never the message), calling `tick` per chunk. */
async function streamFiller(s: RawServer, bytes: number, tick: () => void): Promise<void> {
  const chunk = Buffer.alloc(MiB, 'a');
  for (let sent = 0; sent < bytes; sent += chunk.length) {
    await s.write(bytes - sent >= chunk.length ? chunk : chunk.subarray(0, bytes - sent));
    tick();
  }
}

const refusals = (s: RawServer) =>
  s
    .stderr()
    .split('\n')
    .filter((l) => l.includes('message over the size limit refused'));

describe.each<RawEra>(['legacy', 'modern'])('stdio framing, %s era', (era) => {
  let s: RawServer;
  let idleKiB: number;
  let budgetKiB: number;
  let sampledKiB = 0;
  const sample = () => (sampledKiB = Math.max(sampledKiB, s.memory().rssKiB));

  beforeAll(async () => {
    // The probe's outcome is an info line when the sandbox is ready.
    s = await startRawServer(era, ['--skills', bundled, '--no-watch', '--log-level', 'info']);
    expect((await s.request('warm', 'tools/list')).result?.tools).toBeDefined();
    // Idle means after the start-up work: the sandbox probe runs a second after "ready".
    await waitFor(
      () => /"msg":"sandbox (ready|unavailable|probe failed)/.test(s.stderr()),
      30_000,
      'the probe',
    );
    await new Promise((r) => setTimeout(r, 500));
    idleKiB = s.memory().rssKiB;
    budgetKiB = 2 * idleKiB + DEFAULT_LIMIT / 1024;
  });
  afterAll(() => {
    if (s.child.exitCode === null) s.child.kill('SIGKILL');
  });

  it(
    'refuses a 64 MiB line with the id from its last bytes, then answers the next request',
    async () => {
      // The TypeScript SDK's field order: the id comes last.
      const head = '{"method":"tools/call","params":{"name":"csv-stats","arguments":{"csv":"';
      const tail = '"}},"jsonrpc":"2.0","id":"line-64m"}';
      await s.write(head);
      await streamFiller(s, 64 * MiB, sample);
      await s.write(`${tail}\n`);
      const bytes = head.length + 64 * MiB + tail.length;

      const refused = await s.response('line-64m');
      expect(refused.error).toMatchObject({ code: -32600, data: { bytes, limit: DEFAULT_LIMIT } });
      expect(refused.error!.message).toContain('Message too large');
      expect((await s.request('after-64m', 'tools/list')).result?.tools).toBeDefined();
      expect(refusals(s)).toHaveLength(1);
      expect(refusals(s)[0]).toContain(`"bytes":${bytes}`);
      const { peakKiB } = s.memory();
      console.log(
        `${era}: idle RSS ${idleKiB} KiB; 64 MiB line: sampled RSS max ${sampledKiB} KiB, peak (VmHWM) ${peakKiB} KiB; budget ${budgetKiB} KiB`,
      );
      expect(peakKiB).toBeLessThan(budgetKiB);
    },
    LONG,
  );

  it(
    'refuses a 1 GiB stream without a newline with the id from its first bytes, then answers the next request',
    async () => {
      const head =
        '{"jsonrpc":"2.0","id":"stream-1g","method":"tools/call","params":{"name":"csv-stats","arguments":{"csv":"';
      await s.write(head);
      await streamFiller(s, 1024 * MiB, sample);
      await s.write('\n');

      const refused = await s.response('stream-1g');
      expect(refused.error).toMatchObject({ code: -32600, data: { bytes: head.length + 1024 * MiB } });
      expect((await s.request('after-1g', 'tools/list')).result?.tools).toBeDefined();
      expect(refusals(s)).toHaveLength(2);
      const { peakKiB } = s.memory();
      console.log(
        `${era}: idle RSS ${idleKiB} KiB; after the 1 GiB stream: sampled RSS max ${sampledKiB} KiB, peak (VmHWM) ${peakKiB} KiB; budget ${budgetKiB} KiB`,
      );
      expect(peakKiB).toBeLessThan(budgetKiB);
    },
    LONG,
  );

  it('answers id null for an oversized message whose id is at neither end', async () => {
    const before = s.responses().filter((r) => r.id === null).length;
    await s.write('{"jsonrpc":"2.0","method":"tools/call","params":{"arguments":{"csv":"');
    await streamFiller(s, 17 * MiB, sample);
    await s.write('"},"name":"csv-stats"},"id":"hidden","zzz":1}\n');
    await waitFor(
      () => s.responses().filter((r) => r.id === null).length > before,
      60_000,
      'an id-null error',
    );
    expect(
      s
        .responses()
        .filter((r) => r.id === null)
        .at(-1)!.error?.code,
    ).toBe(-32600);
    expect((await s.request('after-null', 'tools/list')).result?.tools).toBeDefined();
  });

  it(
    'survives malformed JSON, binary bytes, JSON that is not JSON-RPC, 200,000-deep nesting and a flood of 20,000 requests',
    async () => {
      await s.write('{"jsonrpc":"2.0","id":"broken",\n');
      await s.write('not json at all }}}{{{\n');
      await s.write(Buffer.concat([randomBytes(256 * 1024), Buffer.from('\n')]));
      await s.write(Buffer.from([0x00, 0xff, 0xfe, 0xc3, 0x28, 0x0a]));
      await s.write('[1,2,3]\n42\n"text"\nnull\n{}\n');
      await s.write(`${'['.repeat(200_000)}${']'.repeat(200_000)}\n`);
      const deep = `${'{"a":'.repeat(200_000)}1${'}'.repeat(200_000)}`;
      await s.write(
        s
          .line('deep', 'tools/call', { name: 'csv-stats', arguments: { csv: 'DEEP' } })
          .replace('"DEEP"', deep),
      );
      expect(await s.response('deep')).toBeDefined();

      const flood = Array.from({ length: 20_000 }, (_, i) => s.line(`flood-${i}`, 'ping')).join('');
      await s.write(flood);
      await s.response('flood-19999');
      const ids = new Set(s.responses().map((r) => r.id));
      expect(Array.from({ length: 20_000 }, (_, i) => ids.has(`flood-${i}`)).every(Boolean)).toBe(true);

      expect((await s.request('after-bad', 'tools/list')).result?.tools).toBeDefined();
      expect(s.child.exitCode).toBeNull();
    },
    LONG,
  );

  it('still exits 0 when stdin closes, having written only JSON-RPC lines to stdout', async () => {
    expect(await s.end()).toBe(0);
    for (const r of s.responses()) expect(r.jsonrpc).toBe('2.0');
  });
});

describe('max_message_bytes', () => {
  const limit = 64 * 1024;
  const padded = (s: RawServer, id: string, bytes: number) => {
    const bare = s.line(id, 'tools/list', { pad: '' });
    return bare.replace('"pad":""', `"pad":"${'p'.repeat(bytes - bare.length + 1)}"`);
  };

  it.each([
    { era: 'legacy' as const, how: 'flag', args: ['--max-message-bytes', String(limit)], env: {} },
    { era: 'modern' as const, how: 'env', args: [], env: { SKILLS_MCP_MAX_MESSAGE_BYTES: String(limit) } },
  ])(
    'refuses a message one byte over the limit set by $how and accepts one at the limit ($era)',
    async ({ era, args, env }) => {
      const s = await startRawServer(era, ['--skills', bundled, '--no-watch', ...args], env);
      try {
        const over = padded(s, 'over', limit + 1);
        expect(over.length).toBe(limit + 2); // the line plus its newline
        await s.write(over);
        expect((await s.response('over')).error).toMatchObject({
          code: -32600,
          data: { bytes: limit + 1, limit },
        });
        const at = padded(s, 'at', limit);
        await s.write(at);
        expect((await s.response('at')).result?.tools).toBeDefined();
      } finally {
        await s.end();
      }
    },
  );

  it('drops an oversized response without answering it (its id belongs to the server)', async () => {
    const s = await startRawServer('legacy', [
      '--skills',
      bundled,
      '--no-watch',
      '--max-message-bytes',
      String(limit),
    ]);
    try {
      await s.write(`{"jsonrpc":"2.0","id":"resp","result":{"x":"${'r'.repeat(2 * limit)}"}}\n`);
      expect((await s.request('after-resp', 'tools/list')).result?.tools).toBeDefined();
      expect(s.responses().filter((r) => r.id === 'resp' || r.id === null)).toEqual([]);
      expect(s.stderr()).toMatch(/"isResponse":true,"msg":"message over the size limit refused"/);
    } finally {
      await s.end();
    }
  });

  it('is a checked setting: a value under 64 KiB exits 2 naming it', () => {
    const r = runCli(['--skills', bundled, '--max-message-bytes', '100']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/max_message_bytes: .*65536/);
  });
});
