import { html, type Html } from './html.js';

/** The page shell: header, navigation, the stylesheet and the live-refresh script, all from the secret path. */
export function pageLayout(opts: { base: string; title: string; body: Html }): string {
  const { base, title, body } = opts;
  return `<!doctype html>${
    html`<html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <meta name="referrer" content="same-origin" />
        <title>${title} · skills-mcp</title>
        <link rel="icon" href="${base}/icon.svg" type="image/svg+xml" />
        <link rel="stylesheet" href="${base}/console.css" />
        <script src="${base}/console.js" defer></script>
        <script src="${base}/passkey.js" defer></script>
      </head>
      <body>
        <a class="skip" href="#main">Skip to content</a>
        <header>
          <div class="bar">
            <h1>skills-mcp approval console</h1>
            <nav aria-label="Console"><a href="${base}/">Approvals and recent calls</a></nav>
          </div>
        </header>
        <main id="main">${body}</main>
      </body>
    </html>`.text
  }`;
}
