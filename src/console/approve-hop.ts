import type { ApprovalQueue } from './approval-queue.js';
import { html } from './html.js';
import type { RouteRequest, RouteResponse } from './route-types.js';

/** The page of a secret-free link nobody signed in opened: it names no call and links nowhere. */
const HOP_PAGE = `<!doctype html>${
  html`<html lang="en">
    <head>
      <meta charset="utf-8" />
      <meta name="viewport" content="width=device-width, initial-scale=1" />
      <title>Open the skills-mcp approval console · skills-mcp</title>
    </head>
    <body>
      <main>
        <h1>Open the skills-mcp approval console first</h1>
        <p>
          This link leads to an approval only in a browser signed in to the approval console of the skills-mcp
          server that sent it. Open the console there (the page skills-mcp opened in your browser, or the link
          <code>skills-mcp console</code> prints in your terminal), then open this link again, or find the
          approval in the console's list. Approving needs your enrolled passkey.
        </p>
      </main>
    </body>
  </html>`.text
}`;

/**
 * `/approve/<id>`, the one page outside the secret path: the link a URL-mode elicitation sends. A browser signed in
 * to this console (its cookie) is sent on to the approval's page; any other gets the same page whatever the id,
 * saying where to go. It never decides: approving stays a form post on the secret path, with a passkey assertion
 * over that call when one is enrolled.
 */
export function approveHop(req: RouteRequest, deps: { base: string; queue: ApprovalQueue }): RouteResponse {
  const id = req.path.split('/')[2] ?? '';
  if (req.signedIn === true && deps.queue.get(id) !== undefined) {
    return {
      status: 303,
      type: 'text/plain; charset=utf-8',
      body: 'See Other',
      location: `${deps.base}/approvals/${id}`,
    };
  }
  return { status: 200, type: 'text/html; charset=utf-8', body: HOP_PAGE };
}
