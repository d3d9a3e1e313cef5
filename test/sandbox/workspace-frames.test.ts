import { describe, expect, it } from 'vitest';
import { createFrameReader, encodeFrame } from '../../src/sandbox/workspace-frames.js';

const limits = { maxHeaderBytes: 64, maxBodyBytes: 1024 };

describe('workspace frames', () => {
  it('reassembles frames split at any byte', () => {
    const bytes = Buffer.concat([
      encodeFrame({ t: 'file', rel: 'a' }, Buffer.from('xyz')),
      encodeFrame({ t: 'end' }),
    ]);
    const r = createFrameReader(limits);
    const got = [...bytes].flatMap((b) => r.push(Buffer.from([b])));
    expect(got.map((f) => [f.header, f.body.toString()])).toEqual([
      [{ t: 'file', rel: 'a' }, 'xyz'],
      [{ t: 'end' }, ''],
    ]);
    expect(r.pending()).toBe(0);
  });

  it.each([
    ['a header past its bound', encodeFrame({ pad: 'x'.repeat(100) })],
    ['a body past its bound', encodeFrame({ t: 'file' }, Buffer.alloc(2048))],
    ['an empty header', Buffer.alloc(8)],
  ])('refuses %s from its length prefix alone', (_, bytes) => {
    expect(() => createFrameReader(limits).push(bytes.subarray(0, 8))).toThrow(/out of bounds/);
  });

  it("refuses a body that takes the stream's bodies past their total, from its length prefix alone", () => {
    const r = createFrameReader({ ...limits, maxTotalBodyBytes: 1500 });
    expect(r.push(encodeFrame({ t: 'file' }, Buffer.alloc(1000)))).toHaveLength(1);
    expect(() => r.push(encodeFrame({ t: 'file' }, Buffer.alloc(1000)).subarray(0, 8))).toThrow(
      /out of bounds/,
    );
  });

  it('hands out each body once, in a buffer of its own frame', () => {
    const body = Buffer.from('x'.repeat(900));
    const bytes = Buffer.concat([encodeFrame({ t: 'a' }, body), encodeFrame({ t: 'b' }, Buffer.from('yz'))]);
    const r = createFrameReader(limits);
    const got = [r.push(bytes.subarray(0, 500)), r.push(bytes.subarray(500))].flat();
    expect(got.map((f) => f.body.toString())).toEqual([body.toString(), 'yz']);
    expect(got[0]!.body.buffer).not.toBe(got[1]!.body.buffer);
  });

  it('refuses a header that is not a JSON object', () => {
    const bytes = Buffer.concat([Buffer.from([0, 0, 0, 2, 0, 0, 0, 0]), Buffer.from('[]')]);
    expect(() => createFrameReader(limits).push(bytes)).toThrow(/not an object/);
  });
});
