import { rawRequest, type RawResponse } from '../../http/helpers/raw-request.js';

export { rawRequest, type RawResponse };

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
