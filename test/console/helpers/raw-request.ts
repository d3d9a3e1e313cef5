import { request } from 'node:http';

export interface RawResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** One plain HTTP/1.1 request with full control of the headers (Host and Origin included), read to the end. */
export function rawRequest(
  url: string,
  opts: { method?: string; headers?: Record<string, string>; body?: string } = {},
): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      { method: opts.method ?? 'GET', headers: opts.headers ?? {}, agent: false },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            headers: res.headers,
            body: Buffer.concat(chunks).toString('utf8'),
          }),
        );
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(opts.body);
  });
}

/** The decision form's token on an approval page. */
export const csrfOf = (html: string): string => {
  const m = /name="csrf" value="([^"]+)"/.exec(html);
  if (m?.[1] === undefined) throw new Error('no decision form on the page');
  return m[1];
};

/** Posts a decision as the console page would (same Origin, form encoding). */
export async function postDecision(link: string, decision: string): Promise<RawResponse> {
  const page = await rawRequest(link);
  return rawRequest(link, {
    method: 'POST',
    headers: {
      origin: new URL(link).origin,
      'content-type': 'application/x-www-form-urlencoded',
    },
    body: `csrf=${encodeURIComponent(csrfOf(page.body))}&decision=${decision}`,
  });
}
