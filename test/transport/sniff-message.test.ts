import { describe, expect, it } from 'vitest';
import { sniffMessage } from '../../src/transport/sniff-message.js';

const sniff = (head: string, tail: string) => sniffMessage(Buffer.from(head), Buffer.from(tail));

describe('sniffMessage', () => {
  it.each([
    // id first, the message cut after a few bytes
    ['{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"a":"xxxx', '', 7],
    ['{ "id" : "abc-1" , "method":"x', '', 'abc-1'],
    ['{"jsonrpc":"2.0","method":"m","params":{"id":3,"n":[1,{"id":4}]},"id":5,"x":"', '', 5],
    ['{"s":"a\\"id\\":9","id":-2.5e3,', '', -2500],
    // id last (the TypeScript SDK's order), the head cut inside params
    ['{"method":"tools/call","params":{"x":"aaaa', 'aaaa"}},"jsonrpc":"2.0","id":42}', 42],
    ['{"method":"tools/call","params":{"x":"aaaa', 'aa"},"id":"q\\"1"}\r', 'q"1'],
    ['{"method":"m","params":{"x":"aaaa', 'aa" , "id" : 8 }  ', 8],
  ])('reads the top-level id of %j … %j', (head, tail, id) => {
    expect(sniff(head, tail)).toEqual({ id, isResponse: false });
  });

  it.each([
    ['{"method":"m","params":{"x":"aaaa', 'aaaa"}}}'], // a nested id is not the message's
    ['{"method":"m","params":{"x":"aaaa', 'aa","inner":{"id":1}}}'],
    ['{"method":"m","params":{"x":"aaaa', 'a\\",\\"id\\":1}"}'], // an id inside a string
    ['{"jsonrpc":"2.0","id":12', ''], // the number may go on past the known bytes
    ['{"id":null,"method":"m"', ''],
    ['{"id":{"x":1},"method":"m"', ''],
    ['[{"id":1}]', '[{"id":1}]'],
    ['\u0000\u00ff garbage', 'garbage'],
    ['', ''],
  ])('answers id null when neither end shows a top-level id: %j … %j', (head, tail) => {
    expect(sniff(head, tail).id).toBeNull();
  });

  it.each([
    ['{"result":{"content":"aaaa', 'aaaa"},"jsonrpc":"2.0","id":0}'],
    ['{"jsonrpc":"2.0","id":0,"result":{"action":"accept","content":{"x":"aaaa', 'aaaa"}}}'],
    ['{"jsonrpc":"2.0","error":{"code":1,"message":"aaaa', 'aaaa"},"id":3}'],
  ])('tells a response by a result or error before any method: %j', (head, tail) => {
    expect(sniff(head, tail).isResponse).toBe(true);
  });

  it('takes a message whose method comes first for a request, whatever follows', () => {
    expect(sniff('{"method":"m","result":1,"id":2', '').isResponse).toBe(false);
  });
});
