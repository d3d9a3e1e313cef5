// A fake of the Gemini API (generateContent, streamGenerateContent with SSE) on loopback, for driving Gemini CLI
// without a model. When a user turn arrives and a function whose name ends in `tool` is declared, it calls it with
// `input`; when the function's response comes back it records it and answers with a short text.
import { startFakeApi } from './fake-api.mjs';

/** The smallest value a JSON schema accepts (side calls such as the model router ask for JSON). */
function sample(schema = {}) {
  if (schema.enum) return schema.enum[0];
  const type = String(schema.type ?? 'string').toLowerCase();
  if (type === 'object') {
    return Object.fromEntries(
      Object.entries(schema.properties ?? {}).map(([key, value]) => [key, sample(value)]),
    );
  }
  if (type === 'array') return [];
  if (type === 'integer' || type === 'number') return 1;
  if (type === 'boolean') return false;
  return 'fake';
}

export async function startFakeGemini({ tool, input }) {
  const functionResponses = []; // { name, response } the model received
  const declared = new Set();

  function decide(body) {
    const functions = (body.tools ?? []).flatMap((t) => t.functionDeclarations ?? []).map((f) => f.name);
    functions.forEach((name) => declared.add(name));
    const config = body.generationConfig ?? {};
    const schema = config.responseJsonSchema ?? config.responseSchema;
    if (config.responseMimeType === 'application/json') return [{ text: JSON.stringify(sample(schema)) }];
    const parts = body.contents?.at(-1)?.parts ?? [];
    const answered = parts.filter((p) => p.functionResponse).map((p) => p.functionResponse);
    if (answered.length > 0) {
      functionResponses.push(...answered);
      return [{ text: `The tool answered (${JSON.stringify(answered[0].response).length} characters).` }];
    }
    const name = functions.find((f) => f === tool || f.endsWith(`__${tool}`) || f.endsWith(`_${tool}`));
    return name ? [{ functionCall: { name, args: input } }] : [{ text: 'Skills' }];
  }

  const api = await startFakeApi(({ path, body }, res) => {
    if (path.endsWith(':countTokens')) {
      return res.writeHead(200, { 'content-type': 'application/json' }).end('{"totalTokens":10}');
    }
    if (!/:(stream)?generateContent$/i.test(path)) return res.writeHead(404).end();
    const usageMetadata = { promptTokenCount: 10, candidatesTokenCount: 10, totalTokenCount: 20 };
    const answer = {
      candidates: [{ content: { role: 'model', parts: decide(body) }, finishReason: 'STOP', index: 0 }],
      usageMetadata,
    };
    if (path.endsWith(':streamGenerateContent')) {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      return res.end(`data: ${JSON.stringify(answer)}\n\n`);
    }
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(answer));
  });
  return { ...api, functionResponses, declared };
}
