import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRawServer, type RawEra } from '../helpers/raw-stdio.js';
import { connectStdio, type Connected } from '../helpers/stdio-client.js';
import { tempDir } from '../helpers/temp-dir.js';
import { textOf } from '../helpers/text-of.js';

/** An argparse entry point declaring every action kind argparse has, with a short `-v` count flag. */
const ENTRY = `import argparse
p = argparse.ArgumentParser()
p.add_argument("name")
p.add_argument("rest", nargs="*")
p.add_argument("-v", "--verbose", action="count", default=0)
p.add_argument("--level", type=int, default=1)
p.add_argument("--ratio", type=float)
p.add_argument("--dry-run", action="store_true")
p.add_argument("--no-color", action="store_false")
p.add_argument("--tag", action="append")
p.add_argument("--more", action="extend", nargs="+")
p.add_argument("--fast", action="store_const", const=1)
p.add_argument("--flag", action="append_const", const="x")
p.add_argument("--files", nargs="+")
p.add_argument("--pair", nargs=2)
p.add_argument("--opt", nargs="?")
p.add_argument("--mode", choices=["a", "b"])
p.add_argument("--version", action="version", version="1")
p.add_argument("--bool", action=argparse.BooleanOptionalAction)
print(p.parse_args())
`;

const MiB = 1024 * 1024;
/** Just under the 4 MiB a tool input may be, leaving room for the rest of the call. */
const BIG = 4 * MiB - 4096;
/** Generous: the server must answer at all, and promptly; the measured figure is reported by the assertion. */
const ANSWER_MS = 5_000;

type Schema = { type?: string; enum?: unknown[]; items?: Schema; properties?: Record<string, Schema> };

/** mulberry32: a small seeded generator, so a failing case can be replayed from its seed. */
function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const pick = <T>(r: () => number, xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!;

const INTEGERS = [0, -1, 2 ** 31, 1_000_000_000, Number.MAX_SAFE_INTEGER, -Number.MAX_SAFE_INTEGER];

/** An extreme value for a schema; `budget` bytes is what this one value may take as JSON. */
function extreme(r: () => number, s: Schema, budget: number): unknown {
  if (s.enum !== undefined) return pick(r, s.enum);
  switch (s.type) {
    case 'integer':
      return pick(r, INTEGERS);
    case 'number':
      return pick(r, [0, 1e308, -1e308, 5e-324, Number.MAX_SAFE_INTEGER]);
    case 'boolean':
      return r() < 0.5;
    case 'string':
      return pick(r, ['', '-v', '--', 'x'.repeat(budget), '\u{1F600}'.repeat(budget / 8), 'a\nb=c']);
    case 'array': {
      const n = pick(r, [0, 1, 1000, Math.floor(budget / 4)]);
      const item = s.items?.type === 'string' ? '' : 0;
      return Array.from({ length: n }, () => item);
    }
    default:
      return deep(pick(r, [10, 100, 1_000]));
  }
}

/** `[[[…]]]` nested `depth` times (2 bytes a level as JSON). */
function deep(depth: number): unknown {
  let v: unknown = [];
  for (let i = 0; i < depth; i++) v = [v];
  return v;
}

/** Resolves with the promise's value, or rejects once `ms` passed without an answer (the deadline, not a sleep). */
function within<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${what}: no answer within ${ms} ms`)), ms);
    p.then(
      (v) => (clearTimeout(timer), resolve(v)),
      (e: unknown) => (clearTimeout(timer), reject(e as Error)),
    );
  });
}

/**
 * Plays the model: schema-valid inputs at the extremes (huge integers for a count flag, strings of 4 MiB, arrays of
 * a million items, arrays nested a million deep), against the built binary over stdio. Every call must get an
 * answer, and the server must answer the next call: no input may crash or stall it, whatever the gate decides.
 */
describe('extreme tool inputs over stdio', () => {
  let c: Connected;
  let t: { dir: string; cleanup: () => void };
  let exited = false;
  let schema: Schema;
  let forms = 0;
  let refused = 0;

  beforeAll(async () => {
    t = tempDir();
    const add = (name: string, frontmatter: string, entry: string) => {
      mkdirSync(join(t.dir, name, 'scripts'), { recursive: true });
      writeFileSync(
        join(t.dir, name, 'SKILL.md'),
        `---\nname: ${name}\ndescription: Takes any input. Use in tests.\nentry_point: scripts/main.py\n${frontmatter}---\n\n${name}.\n`,
      );
      writeFileSync(join(t.dir, name, 'scripts', 'main.py'), entry);
    };
    add('flags', '', ENTRY);
    add('anything', 'input_schema:\n  type: object\n', 'print("ran")\n');
    writeFileSync(join(t.dir, 'skills-mcp.yaml'), 'approval:\n  mode: ask\n');
    c = await connectStdio({
      era: 'auto',
      args: ['--skills', t.dir, '--config', join(t.dir, 'skills-mcp.yaml'), '--no-watch'],
      capabilities: { elicitation: { form: {} } },
    });
    c.transport.onclose = () => (exited = true);
    // Nothing may run: every form that does come up is declined.
    c.client.setRequestHandler('elicitation/create', () => (forms++, Promise.resolve({ action: 'decline' })));
    const { tools } = await c.client.listTools();
    schema = tools.find((x) => x.name === 'flags')!.inputSchema as Schema;
  });
  afterAll(async () => {
    await c.close();
    expect(c.stderr()).not.toMatch(/Fatal|invalid size/);
    t.cleanup();
  });

  /** Sends one call, then lists the tools: both must be answered, and the server must still be up. */
  async function survives(name: string, args: Record<string, unknown>, what: string): Promise<number> {
    const r = await within(c.client.callTool({ name, arguments: args }), 15_000, `${what} (the call)`);
    if (r._meta?.['skills-mcp/code'] === 'INPUT_TOO_LARGE') refused++;
    // An answer a model can act on: never a crash report, an exhausted stack or an internal error.
    expect(textOf(r), what).not.toMatch(/internal error|Maximum call stack|invalid size/i);
    const sent = performance.now();
    await within(c.client.listTools(), ANSWER_MS, `${what} (the next call)`);
    expect(exited, what).toBe(false);
    return performance.now() - sent;
  }

  it('answers a count flag of a billion with a tool error naming the limit', async () => {
    const r = await within(
      c.client.callTool({ name: 'flags', arguments: { name: 'n', verbose: 1_000_000_000 } }),
      15_000,
      'verbose: 1e9',
    );
    expect(r.isError).toBe(true);
    expect(r._meta?.['skills-mcp/code']).toBe('INPUT_TOO_LARGE');
    expect(JSON.stringify(r.content)).toMatch(/verbose.*at most \d+/);
    await within(c.client.listTools(), ANSWER_MS, 'the call after verbose: 1e9');
  });

  it('survives seeded extreme inputs for every property of an argparse schema', async () => {
    const props = Object.entries(schema.properties ?? {});
    expect(props.map(([k]) => k)).toEqual(
      expect.arrayContaining(['verbose', 'tag', 'files', 'more', 'pair']),
    );
    const worst: number[] = [];
    const [formsBefore, refusedBefore] = [forms, refused];
    for (let seed = 1; seed <= 24; seed++) {
      const r = rng(seed);
      // One property gets the whole budget, the others something small; `name` is required.
      const big = pick(r, props)[0];
      const args: Record<string, unknown> = { name: 'n' };
      for (const [k, s] of props) {
        if (k !== big && r() < 0.5) continue;
        args[k] = extreme(r, s, k === big ? BIG : 64);
      }
      worst.push(await survives('flags', args, `seed ${seed}, ${big} large`));
    }
    // The cases reach both ends: some are refused at a limit, some get as far as the (declined) form.
    expect(forms).toBeGreaterThan(formsBefore);
    expect(refused).toBeGreaterThan(refusedBefore);
    expect(Math.max(...worst), `next-call latencies (ms): ${worst.map(Math.round).join(' ')}`).toBeLessThan(
      ANSWER_MS,
    );
  });

  it('survives a million extra args to run_skill_script and a 4 MiB string in a free-form input', async () => {
    const latencies = [
      await survives(
        'run_skill_script',
        { skill: 'flags', args: Array.from({ length: 1_000_000 }, () => '') },
        'a million args',
      ),
      await survives('anything', { deep: deep(1_000) }, 'nested a thousand deep'),
      await survives('anything', { s: 'x'.repeat(BIG) }, 'a 4 MiB string'),
    ];
    expect(latencies.every((ms) => ms < ANSWER_MS)).toBe(true);
  });

  // No client library serializes such nesting: the model writes the bytes itself.
  it.each<RawEra>(['legacy', 'modern'])(
    'answers an input nested a million deep, then the next call (%s era, raw JSON-RPC)',
    async (era) => {
      const raw = await startRawServer(era, [
        '--skills',
        t.dir,
        '--config',
        join(t.dir, 'skills-mcp.yaml'),
        '--no-watch',
      ]);
      try {
        const depth = 1_000_000;
        const call = raw.line(1, 'tools/call', { name: 'anything', arguments: { deep: '@' } });
        await raw.write(call.replace('"@"', `${'['.repeat(depth)}${']'.repeat(depth)}`));
        await raw.write(raw.line(2, 'tools/list'));
        const answered = await raw.response(1, 15_000);
        expect(answered.result?.isError).toBe(true);
        expect((answered.result?._meta as Record<string, unknown>)['skills-mcp/code']).toBe(
          'INPUT_TOO_LARGE',
        );
        expect(JSON.stringify(answered.result?.content)).toContain('at most 64 levels');
        const sent = performance.now();
        await raw.request(3, 'tools/list');
        expect(performance.now() - sent).toBeLessThan(ANSWER_MS);
        expect(raw.child.exitCode).toBe(null);
      } finally {
        await raw.end();
      }
    },
  );
});
