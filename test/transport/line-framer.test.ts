import { describe, expect, it } from 'vitest';
import {
  createLineFramer,
  OVERSIZED_EDGE_BYTES,
  type OversizedLine,
} from '../../src/transport/line-framer.js';

function frame(max: number, chunks: (string | Buffer)[], end = false) {
  const lines: string[] = [];
  const oversized: OversizedLine[] = [];
  const f = createLineFramer({
    maxLineBytes: max,
    onLine: (l) => lines.push(l.toString()),
    onOversized: (o) => oversized.push(o),
  });
  for (const c of chunks) f.push(typeof c === 'string' ? Buffer.from(c) : c);
  if (end) f.end();
  return { lines, oversized };
}

describe('createLineFramer', () => {
  it.each([
    { chunks: ['a\nb\n'], lines: ['a', 'b'] },
    { chunks: ['a', 'b', 'c\n'], lines: ['abc'] },
    { chunks: ['ab\ncd', 'ef\n', '\n'], lines: ['ab', 'cdef', ''] },
    { chunks: ['x\r\n'], lines: ['x\r'] },
    { chunks: ['unterminated'], lines: [] },
  ])('splits $chunks into lines', ({ chunks, lines }) => {
    expect(frame(100, chunks).lines).toEqual(lines);
  });

  it('reports a line at the limit whole and one byte over it as oversized, then carries on', () => {
    const r = frame(10, ['0123456789\n', '0123456789A\n', 'next\n']);
    expect(r.lines).toEqual(['0123456789', 'next']);
    expect(r.oversized.map((o) => [o.bytes, o.head.toString(), o.tail.toString()])).toEqual([
      [11, '0123456789A', '0123456789A'],
    ]);
  });

  it('keeps only the first and last bytes of an oversized line, however it is chunked', () => {
    const body = Buffer.alloc(3 * OVERSIZED_EDGE_BYTES, 'm');
    const chunks = ['{"id":1,', body.subarray(0, 5), body.subarray(5), Buffer.from('"end":2}\nok\n')];
    const r = frame(1000, chunks);
    const o = r.oversized[0]!;
    expect(o.bytes).toBe(8 + body.length + 8);
    expect(o.head).toHaveLength(OVERSIZED_EDGE_BYTES);
    expect(o.head.toString().startsWith('{"id":1,mmm')).toBe(true);
    expect(o.tail).toHaveLength(OVERSIZED_EDGE_BYTES);
    expect(o.tail.toString().endsWith('mmm"end":2}')).toBe(true);
    expect(r.lines).toEqual(['ok']);
  });

  it('counts a long line without a newline and reports it when the stream ends', () => {
    const chunk = Buffer.alloc(64 * 1024, 'z');
    const r = frame(
      100,
      Array.from({ length: 16 }, () => chunk),
      true,
    );
    expect(r.lines).toEqual([]);
    expect(r.oversized.map((o) => o.bytes)).toEqual([16 * 64 * 1024]);
  });

  it('drops an unterminated line under the limit when the stream ends', () => {
    expect(frame(100, ['partial'], true)).toEqual({ lines: [], oversized: [] });
  });
});
