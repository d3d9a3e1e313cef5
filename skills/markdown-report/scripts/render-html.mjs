// Renders the Markdown subset used by markdown-report to safe, self-contained HTML.
// Supported: paragraphs, ATX headings, -/*/+ and 1. lists, > quotes, ``` fences, `code`,
// **bold**, *italic*/_italic_, [links](url). Everything is HTML-escaped; only http(s), mailto,
// relative and #fragment links are kept as links.

const SAFE_URL = /^(?:https?:|mailto:|#|\/|\.{1,2}\/|[^:]*$)/i;

export function escapeHtml(text) {
  return String(text)
    .replaceAll('&', '&amp;')
    .replaceAll('<', '&lt;')
    .replaceAll('>', '&gt;')
    .replaceAll('"', '&quot;')
    .replaceAll("'", '&#39;');
}

function renderEmphasis(escaped) {
  return escaped
    .replace(/\*\*(?=\S)([\s\S]*?\S)\*\*/g, '<strong>$1</strong>')
    .replace(/(^|[^\w*])\*(?=\S)([^*]*?\S)\*(?![\w*])/g, '$1<em>$2</em>')
    .replace(/(^|\W)_(?=\S)([^_]*?\S)_(?!\w)/g, '$1<em>$2</em>');
}

function renderText(text) {
  // Links first (on raw text), then escape everything else around them.
  let html = '';
  let last = 0;
  const link = /\[([^\]\n]+)\]\(\s*((?:[^()\s]|\([^()\s]*\))+)\s*\)/g;
  for (const match of text.matchAll(link)) {
    html += renderEmphasis(escapeHtml(text.slice(last, match.index)));
    const [, label, url] = match;
    const inner = renderEmphasis(escapeHtml(label));
    html += SAFE_URL.test(url) ? `<a href="${escapeHtml(url)}">${inner}</a>` : inner;
    last = match.index + match[0].length;
  }
  return html + renderEmphasis(escapeHtml(text.slice(last)));
}

/** Inline Markdown → HTML (code spans are never interpreted). */
export function renderInline(text) {
  let html = '';
  let last = 0;
  for (const match of String(text).matchAll(/(`+)([\s\S]*?[^`])\1(?!`)/g)) {
    html += renderText(text.slice(last, match.index));
    html += `<code>${escapeHtml(match[2].trim())}</code>`;
    last = match.index + match[0].length;
  }
  return html + renderText(text.slice(last));
}

function listItem(line) {
  const bullet = /^\s{0,3}[-*+]\s+(.*)$/.exec(line);
  if (bullet) return { ordered: false, text: bullet[1] };
  const ordered = /^\s{0,3}\d{1,9}[.)]\s+(.*)$/.exec(line);
  if (ordered) return { ordered: true, text: ordered[1] };
  return null;
}

/** Block Markdown → HTML. `minHeading` is the smallest <hN> a heading inside the text may use. */
export function renderBlocks(markdown, minHeading = 3) {
  const lines = String(markdown).replace(/\r\n?/g, '\n').split('\n');
  const out = [];
  let paragraph = [];
  let list = null;
  const flush = () => {
    if (paragraph.length) out.push(`<p>${renderInline(paragraph.join('\n'))}</p>`);
    paragraph = [];
    if (list) {
      const tag = list.ordered ? 'ol' : 'ul';
      out.push(`<${tag}>${list.items.map((item) => `<li>${renderInline(item)}</li>`).join('')}</${tag}>`);
    }
    list = null;
  };
  for (let i = 0; i < lines.length; i += 1) {
    const line = lines[i];
    const fence = /^\s{0,3}(`{3,}|~{3,})\s*([\w+-]*)/.exec(line);
    if (fence) {
      flush();
      const code = [];
      for (i += 1; i < lines.length && !lines[i].trimStart().startsWith(fence[1]); i += 1)
        code.push(lines[i]);
      const cls = fence[2] ? ` class="language-${escapeHtml(fence[2])}"` : '';
      out.push(`<pre><code${cls}>${escapeHtml(code.join('\n'))}</code></pre>`);
      continue;
    }
    if (!line.trim()) {
      flush();
      continue;
    }
    const heading = /^\s{0,3}(#{1,6})\s+(.*?)(?:\s+#+)?\s*$/.exec(line);
    if (heading) {
      flush();
      const level = Math.min(6, Math.max(minHeading, heading[1].length));
      out.push(`<h${level}>${renderInline(heading[2])}</h${level}>`);
      continue;
    }
    const quote = /^\s{0,3}>\s?(.*)$/.exec(line);
    if (quote) {
      flush();
      out.push(`<blockquote><p>${renderInline(quote[1])}</p></blockquote>`);
      continue;
    }
    const item = listItem(line);
    if (item) {
      if (paragraph.length || (list && list.ordered !== item.ordered)) flush();
      list ??= { ordered: item.ordered, items: [] };
      list.items.push(item.text);
      continue;
    }
    if (list && /^\s+\S/.test(line)) {
      list.items[list.items.length - 1] += `\n${line.trim()}`;
      continue;
    }
    if (list) flush();
    paragraph.push(line.trim());
  }
  flush();
  return out.join('\n');
}

const STYLE = `
body{font:16px/1.55 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:#1f2328;margin:0;background:#fff}
main{max-width:860px;margin:0 auto;padding:2rem 1.25rem 4rem}
h1{font-size:2rem;margin:0 0 .25rem}h2{border-bottom:1px solid #d0d7de;padding-bottom:.3rem;margin-top:2rem}
.subtitle{font-size:1.15rem;color:#59636e;margin:.25rem 0}.meta{color:#59636e;font-size:.9rem}
table{border-collapse:collapse;margin:1rem 0;display:block;overflow-x:auto}
th,td{border:1px solid #d0d7de;padding:.35rem .7rem}th{background:#f6f8fa}tr:nth-child(2n) td{background:#fafbfc}
caption{caption-side:bottom;color:#59636e;font-size:.9rem;padding-top:.4rem;text-align:left}
code{font:.9em ui-monospace,SFMono-Regular,Menlo,monospace;background:#eff1f3;padding:.1em .3em;border-radius:4px}
pre{background:#f6f8fa;padding:.8rem 1rem;overflow-x:auto;border-radius:6px}pre code{background:none;padding:0}
blockquote{margin:0;padding:0 1rem;color:#59636e;border-left:.25rem solid #d0d7de}
nav ul{padding-left:1.2rem}
`.trim();

/** A complete HTML page. `body` is already-rendered HTML. No external resources, no scripts. */
export function htmlDocument(title, body) {
  return [
    '<!doctype html>',
    '<html lang="en">',
    '<head>',
    '<meta charset="utf-8">',
    '<meta name="viewport" content="width=device-width, initial-scale=1">',
    `<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; img-src data:">`,
    `<title>${escapeHtml(title)}</title>`,
    `<style>${STYLE}</style>`,
    '</head>',
    '<body>',
    '<main>',
    body,
    '</main>',
    '</body>',
    '</html>',
    '',
  ].join('\n');
}
