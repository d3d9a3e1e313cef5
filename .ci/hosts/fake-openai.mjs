// A fake of the OpenAI Responses API (`POST /v1/responses`, streamed as server-sent events) on loopback, for
// driving Codex without a model. When a user turn arrives and the skills server's tool is offered (Codex groups a
// server's tools in a namespace, `mcp__<server>`), it calls that tool with `input`; when the tool's output comes
// back it records it and answers with a short text. Requests that offer no such tool get a one-word text answer.
import { startFakeApi } from './fake-api.mjs';

const textOf = (output) =>
  typeof output === 'string'
    ? output
    : (output ?? []).map((part) => part.text ?? textOf(part.content)).join('\n');

/** The events of one response holding `items` (messages or function calls), as the real API streams them. */
function streamResponse(res, model, items) {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  let sequence = 0;
  const send = (type, data) =>
    res.write(`event: ${type}\ndata: ${JSON.stringify({ type, sequence_number: sequence++, ...data })}\n\n`);
  const id = `resp_fake_${Date.now().toString(36)}`;
  const response = { id, object: 'response', model, status: 'in_progress', output: [] };
  send('response.created', { response });
  items.forEach((item, output_index) => {
    send('response.output_item.added', { output_index, item: { ...item, status: 'in_progress' } });
    if (item.type === 'message') {
      const text = item.content[0].text;
      send('response.output_text.delta', { output_index, item_id: item.id, content_index: 0, delta: text });
    }
    send('response.output_item.done', { output_index, item: { ...item, status: 'completed' } });
  });
  const usage = {
    input_tokens: 10,
    input_tokens_details: { cached_tokens: 0 },
    output_tokens: 10,
    output_tokens_details: { reasoning_tokens: 0 },
    total_tokens: 20,
  };
  send('response.completed', { response: { ...response, status: 'completed', output: items, usage } });
  res.end();
}

/** `namespace` and `tool` name the tool as Codex offers it (`mcp__skills`, `csv_stats`); `input` its arguments. */
export async function startFakeOpenAI({ namespace, tool, input }) {
  const requests = []; // { tools } per Responses request: the tool names offered
  const toolOutputs = []; // { callId, text } for each output of `tool` the model received
  const ourCalls = new Set();
  let counter = 0;
  const message = (text) => ({
    type: 'message',
    id: `msg_fake_${++counter}`,
    role: 'assistant',
    content: [{ type: 'output_text', text, annotations: [] }],
  });

  function decide(body) {
    const offered = (body.tools ?? []).flatMap((t) =>
      t.type === 'namespace' ? (t.tools ?? []).map((f) => `${t.name}.${f.name}`) : [t.name],
    );
    requests.push({ tools: offered });
    const last = (body.input ?? []).at(-1);
    if (last?.type === 'function_call_output' && ourCalls.has(last.call_id)) {
      const text = textOf(last.output);
      toolOutputs.push({ callId: last.call_id, text });
      return [message(`The tool answered (${text.length} characters).`)];
    }
    if (!offered.includes(`${namespace}.${tool}`)) return [message('Skills')];
    const callId = `call_fake_${++counter}`;
    ourCalls.add(callId);
    const call = { type: 'function_call', id: `fc_fake_${counter}`, call_id: callId, namespace, name: tool };
    return [{ ...call, arguments: JSON.stringify(input) }];
  }

  const api = await startFakeApi(({ method, path, body }, res) => {
    if (method !== 'POST' || !path.endsWith('/responses')) return res.writeHead(404).end();
    streamResponse(res, body.model ?? 'gpt-fake', decide(body));
  });
  return { ...api, requests, toolOutputs };
}
