import { html } from '../console/html.js';

/** The one-off enrolment page: a label, one button, a status line (the script does the rest). */
export function enrollPage(base: string, label: string): string {
  return `<!doctype html>${
    html`<html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <meta name="referrer" content="same-origin" />
        <title>Enroll a passkey · skills-mcp</title>
        <link rel="icon" href="${base}/icon.svg" type="image/svg+xml" />
        <link rel="stylesheet" href="${base}/console.css" />
        <script src="${base}/passkey.js" defer></script>
      </head>
      <body>
        <header>
          <div class="bar"><h1>skills-mcp approval console</h1></div>
        </header>
        <main id="main">
          <h2 id="enroll-title">Enroll a passkey for approvals</h2>
          <section class="card" aria-labelledby="enroll-title">
            <p>
              From now on, a run is approved in the approval console only with this passkey: your device asks
              for your fingerprint, face or PIN, and signs exactly the call you approve.
            </p>
            <dl class="facts">
              <dt>Label</dt>
              <dd><code>${label}</code></dd>
            </dl>
            <form class="decide">
              <button type="button" id="enroll" class="approve">Create passkey</button>
            </form>
            <p id="enroll-status" role="status" aria-live="polite"></p>
          </section>
        </main>
      </body>
    </html>`.text
  }`;
}
