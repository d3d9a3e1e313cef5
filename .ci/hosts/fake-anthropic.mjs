// A fake of the Anthropic Messages API on loopback, for driving Claude Code without a model. Every request is
// recorded (the tool names offered, the last user turn, the tool results) so a test can read what "the model"
// received. Its one behaviour: when a user turn arrives and the skills server's tool is offered, it calls that tool
// with the given input; when Claude Code still hides MCP tools behind its ToolSearch tool, it searches for it first;
// when the tool's result comes back it answers with a short text and stops. Requests with no tools (titles, topic
// checks) get a one-word text answer.
import { startFakeApi } from './fake-api.mjs';

const textOf = (content) =>
  typeof content === 'string'
    ? content
    : (content ?? []).map((block) => (block.type === 'text' ? block.text : textOf(block.content))).join('\n');

/** Server-sent events of one assistant message holding `blocks` (text or tool_use), as the real API streams them. */
function streamMessage(res, model, blocks, stopReason) {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  const send = (type, data) => res.write(`event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`);
  const usage = {
    input_tokens: 10,
    output_tokens: 10,
    cache_creation_input_tokens: 0,
    cache_read_input_tokens: 0,
  };
  const id = `msg_fake_${Date.now().toString(36)}`;
  send('message_start', {
    message: { id, type: 'message', role: 'assistant', model, content: [], stop_reason: null, usage },
  });
  blocks.forEach((block, index) => {
    if (block.type === 'text') {
      send('content_block_start', { index, content_block: { type: 'text', text: '' } });
      send('content_block_delta', { index, delta: { type: 'text_delta', text: block.text } });
    } else {
      send('content_block_start', {
        index,
        content_block: { type: 'tool_use', id: block.id, name: block.name, input: {} },
      });
      send('content_block_delta', {
        index,
        delta: { type: 'input_json_delta', partial_json: JSON.stringify(block.input) },
      });
    }
    send('content_block_stop', { index });
  });
  send('message_delta', {
    delta: { stop_reason: stopReason, stop_sequence: null },
    usage: { output_tokens: 10 },
  });
  send('message_stop', {});
  res.end();
}

/**
 * Starts the fake on 127.0.0.1 (a free port). `tool` is the tool's name as the host offers it
 * (`mcp__skills__csv-stats`), `input` what to call it with.
 */
export async function startFakeAnthropic({ tool, input }) {
  const requests = []; // { path, tools, lastUser } per Messages request
  const toolResults = []; // { toolUseId, isError, text } for each result of `tool` the model received
  const ourCalls = new Set();
  let counter = 0;

  function decide(body) {
    const offered = (body.tools ?? []).map((t) => t.name);
    const last = (body.messages ?? []).at(-1);
    const blocks = Array.isArray(last?.content) ? last.content : [];
    requests.push({ tools: offered, lastUser: textOf(last?.content).slice(0, 2000) });
    const results = blocks.filter((b) => b.type === 'tool_result');
    for (const result of results.filter((r) => ourCalls.has(r.tool_use_id))) {
      const text = textOf(result.content);
      toolResults.push({ toolUseId: result.tool_use_id, isError: result.is_error === true, text });
      return [[{ type: 'text', text: `The tool answered (${text.length} characters).` }], 'end_turn'];
    }
    if (offered.length === 0) return [[{ type: 'text', text: 'Skills' }], 'end_turn'];
    const id = `toolu_fake_${++counter}`;
    const searched = (body.messages ?? []).some(
      (m) =>
        Array.isArray(m.content) && m.content.some((b) => b.tool_use_id?.startsWith('toolu_fake_search')),
    );
    const deferred = (body.tools ?? []).find((t) => t.name === tool)?.defer_loading === true;
    if (offered.includes(tool) && (searched || !deferred)) {
      ourCalls.add(id);
      return [[{ type: 'tool_use', id, name: tool, input }], 'tool_use'];
    }
    if (offered.includes('ToolSearch') && !searched) {
      const search = { query: `select:${tool}`, max_results: 1 };
      return [
        [{ type: 'tool_use', id: `toolu_fake_search_${counter}`, name: 'ToolSearch', input: search }],
        'tool_use',
      ];
    }
    return [[{ type: 'text', text: `No tool named ${tool} was offered.` }], 'end_turn'];
  }

  const api = await startFakeApi(({ method, path, body }, res) => {
    if (method === 'HEAD' || method === 'GET') return res.writeHead(200).end();
    if (path.endsWith('/count_tokens')) {
      return res.writeHead(200, { 'content-type': 'application/json' }).end('{"input_tokens":10}');
    }
    if (!path.endsWith('/v1/messages')) return res.writeHead(404).end();
    const [blocks, stopReason] = decide(body);
    if (body.stream) return streamMessage(res, body.model ?? 'claude-fake', blocks, stopReason);
    const message = {
      id: 'msg_fake',
      type: 'message',
      role: 'assistant',
      model: body.model,
      content: blocks,
    };
    const usage = { input_tokens: 10, output_tokens: 10 };
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ ...message, stop_reason: stopReason, usage }));
  });
  return { ...api, requests, toolResults };
}
