/** Largest discovery document or key set read from an issuer; a longer answer is abandoned as it arrives. */
export const MAX_ISSUER_RESPONSE_BYTES = 1024 * 1024;

/**
 * `fetch` whose body is read up to `maxBytes` and then abandoned (the request aborted): an issuer, or whatever its
 * discovery document points at, cannot make the server hold an answer of any size. Resolves with a Response holding
 * the bytes read, for callers (jose) that expect one.
 */
export async function boundedFetch(
  url: string,
  init: RequestInit,
  maxBytes = MAX_ISSUER_RESPONSE_BYTES,
): Promise<Response> {
  const controller = new AbortController();
  const signal = init.signal == null ? controller.signal : AbortSignal.any([init.signal, controller.signal]);
  const res = await fetch(url, { ...init, signal });
  const declared = Number(res.headers.get('content-length') ?? '0');
  if (declared > maxBytes) {
    controller.abort();
    throw new Error(`${url} answered with ${declared} bytes (at most ${maxBytes} are read)`);
  }
  const chunks: Uint8Array[] = [];
  let total = 0;
  if (res.body !== null) {
    for await (const chunk of res.body as AsyncIterable<Uint8Array>) {
      total += chunk.byteLength;
      if (total > maxBytes) {
        controller.abort();
        throw new Error(`${url} answered with more than ${maxBytes} bytes`);
      }
      chunks.push(chunk);
    }
  }
  return new Response(Buffer.concat(chunks), { status: res.status, headers: res.headers });
}
