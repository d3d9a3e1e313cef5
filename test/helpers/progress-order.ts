import type { JSONRPCMessage, Transport } from '@modelcontextprotocol/client';

const UNKNOWN_TOKEN = /^Received a progress notification for an unknown token: (.*)$/s;

type Params = {
  _meta?: { progressToken?: unknown };
  progressToken?: unknown;
  progress?: unknown;
  message?: unknown;
};
const paramsOf = (m: JSONRPCMessage): Params | undefined =>
  'params' in m && typeof m.params === 'object' && m.params !== null ? (m.params as Params) : undefined;
const keyOf = (token: unknown, progress: unknown) => JSON.stringify([token, progress]);

/**
 * Watches the wire of a client transport for the order of progress and responses, to tell the client SDK's own
 * reordering from a server that sends progress too late.
 *
 * The SDK client (2.4) answers a response at once but dispatches a notification a microtask later, so a progress
 * notification read in the same chunk as its request's response reaches `_onprogress` after the response retired
 * the token, and `onerror` fires although the server sent it in time (modelcontextprotocol/typescript-sdk#2580).
 * `isReorderedByClient(err)` is true only for that error about a notification that arrived while its request was
 * still unanswered; progress after the response, or for a token never sent, stays an error. Install before
 * `client.connect` (the client chains the `onmessage` it finds). `inTimeMessages()` lists, in wire order, the messages
 * of the progress notifications that arrived before their request's response.
 */
export function watchProgressOrder(transport: Transport): {
  isReorderedByClient: (err: Error) => boolean;
  inTimeMessages: () => string[];
} {
  const open = new Map<string, string>(); // progress token → id of the request that carries it, until answered
  const inTime = new Set<string>();
  const messages: string[] = [];
  const send = transport.send.bind(transport);
  transport.send = (message, options) => {
    const token = paramsOf(message)?._meta?.progressToken;
    if ('method' in message && 'id' in message && token !== undefined)
      open.set(JSON.stringify(token), JSON.stringify(message.id));
    return send(message, options);
  };
  transport.onmessage = (message) => {
    if ('method' in message) {
      const p = paramsOf(message);
      if (message.method === 'notifications/progress' && open.has(JSON.stringify(p?.progressToken))) {
        inTime.add(keyOf(p?.progressToken, p?.progress));
        messages.push(typeof p?.message === 'string' ? p.message : '');
      }
    } else if ('id' in message) {
      const id = JSON.stringify(message.id);
      for (const [token, of] of open) if (of === id) open.delete(token);
    }
  };
  return {
    inTimeMessages: () => [...messages],
    isReorderedByClient: (err) => {
      const json = UNKNOWN_TOKEN.exec(err.message)?.[1];
      if (json === undefined) return false;
      try {
        const p = paramsOf(JSON.parse(json) as JSONRPCMessage);
        return inTime.has(keyOf(p?.progressToken, p?.progress));
      } catch {
        return false;
      }
    },
  };
}
