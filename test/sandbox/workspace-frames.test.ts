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

  it('refuses a header that is not a JSON object', () => {
    const bytes = Buffer.concat([Buffer.from([0, 0, 0, 2, 0, 0, 0, 0]), Buffer.from('[]')]);
    expect(() => createFrameReader(limits).push(bytes)).toThrow(/not an object/);
  });
});
