/** The console's static files: served from the secret path, no CDN, no external fonts, no inline code (CSP). */

export const CONSOLE_CSS = `
:root { color-scheme: light dark; --bg: #f6f7f9; --fg: #15191e; --muted: #56606b; --card: #fff; --line: #d5dae0;
  --ok: #0b6b2f; --ok-bg: #e3f4e8; --warn: #8a5200; --warn-bg: #fff2d6; --bad: #a1121b; --bad-bg: #fde5e6;
  --accent: #1346b5; --focus: #f5a400; }
@media (prefers-color-scheme: dark) { :root { --bg: #14171b; --fg: #e8ebef; --muted: #a6b0bb; --card: #1d2126;
  --line: #363d45; --ok: #7fd99c; --ok-bg: #17331f; --warn: #ffc766; --warn-bg: #3a2c10; --bad: #ff8d94;
  --bad-bg: #3d1a1d; --accent: #8fb0ff; } }
* { box-sizing: border-box; }
html { font: 16px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif; }
body { margin: 0; background: var(--bg); color: var(--fg); }
a { color: var(--accent); }
:focus-visible { outline: 3px solid var(--focus); outline-offset: 2px; }
.skip { position: absolute; left: -999px; } .skip:focus { left: 1rem; top: 1rem; background: var(--card); padding: .5rem; }
header { background: var(--card); border-bottom: 1px solid var(--line); }
header .bar { max-width: 72rem; margin: 0 auto; padding: .75rem 1rem; display: flex; gap: 1rem; align-items: baseline; flex-wrap: wrap; }
header h1 { font-size: 1.15rem; margin: 0; }
header nav a { margin-right: 1rem; }
main { max-width: 72rem; margin: 0 auto; padding: 1rem; }
h2 { font-size: 1.1rem; margin: 1.5rem 0 .5rem; }
.muted { color: var(--muted); }
.card { background: var(--card); border: 1px solid var(--line); border-radius: 8px; padding: 1rem; margin: 0 0 1rem; }
.card.pending { border-left: 6px solid var(--warn); }
.card h2, .card h3 { margin: 0 0 .5rem; font-size: 1.1rem; overflow-wrap: anywhere; }
dl.facts { display: grid; grid-template-columns: max-content 1fr; gap: .25rem 1rem; margin: 0 0 1rem; }
dl.facts dt { color: var(--muted); }
dl.facts dd { margin: 0; overflow-wrap: anywhere; }
code, .mono { font-family: ui-monospace, "SFMono-Regular", Menlo, Consolas, "Liberation Mono", monospace; font-size: .92em; }
ul.plain { margin: 0; padding-left: 1.1rem; }
pre.full { white-space: pre-wrap; overflow-wrap: anywhere; max-height: 70vh; overflow: auto; margin: 0 0 1rem; }
.badge { display: inline-block; border-radius: 999px; padding: 0 .55rem; font-size: .85rem; font-weight: 600; white-space: nowrap; }
.badge.ok { background: var(--ok-bg); color: var(--ok); }
.badge.warn { background: var(--warn-bg); color: var(--warn); }
.badge.bad { background: var(--bad-bg); color: var(--bad); }
.badge.plain { background: var(--bg); color: var(--muted); border: 1px solid var(--line); }
form.decide { display: flex; flex-wrap: wrap; gap: .5rem; margin: 0; }
form.decide button { font: inherit; font-weight: 600; padding: .6rem 1rem; border-radius: 6px; border: 2px solid var(--line);
  background: var(--card); color: var(--fg); cursor: pointer; min-height: 44px; }
form.decide button.approve { background: var(--ok); border-color: var(--ok); color: var(--card); }
form.decide button.abort { border-color: var(--bad); color: var(--bad); }
form.decide button:disabled { opacity: .5; cursor: progress; }
.table-wrap { overflow-x: auto; background: var(--card); border: 1px solid var(--line); border-radius: 8px; }
table { border-collapse: collapse; width: 100%; font-size: .95rem; }
th, td { text-align: left; padding: .5rem .75rem; border-bottom: 1px solid var(--line); vertical-align: top; }
th { color: var(--muted); font-weight: 600; white-space: nowrap; }
tr:last-child td { border-bottom: 0; }
td.num { text-align: right; white-space: nowrap; }
.notice { padding: .75rem 1rem; border-radius: 8px; background: var(--warn-bg); color: var(--fg); margin: 0 0 1rem; }
@media (max-width: 40rem) {
  dl.facts { grid-template-columns: 1fr; gap: 0; }
  dl.facts dd { margin-bottom: .5rem; }
  form.decide button { flex: 1 1 100%; }
  table.calls thead { display: none; }
  table.calls tr { display: block; border-bottom: 1px solid var(--line); padding: .5rem 0; }
  table.calls td { display: block; position: relative; border: 0; padding: .15rem .75rem .15rem 7.5rem; }
  table.calls td::before { content: attr(data-label); color: var(--muted); position: absolute; left: .75rem; }
  td.num { text-align: left; }
}
`;

/**
 * Live refresh for a page left open: re-fetches the page every 2 s and swaps the regions marked `data-live` that
 * changed, skipping a region that holds the keyboard focus or the mouse pointer (what the person is about to click
 * never moves under them). Decisions never need it (plain form POST).
 */
export const CONSOLE_JS = `(() => {
  const regions = () => [...document.querySelectorAll('[data-live]')];
  if (regions().length === 0) return;
  const tick = async () => {
    try {
      const res = await fetch(location.pathname, { cache: 'no-store', credentials: 'omit' });
      if (res.ok) {
        const doc = new DOMParser().parseFromString(await res.text(), 'text/html');
        for (const r of regions()) {
          const next = doc.getElementById(r.id);
          if (next === null || next.innerHTML === r.innerHTML) continue;
          if (r.contains(document.activeElement) || r.matches(':hover')) continue;
          r.innerHTML = next.innerHTML;
        }
      }
    } catch {
      // The server stopped: keep the last view.
    }
    setTimeout(tick, 2000);
  };
  setTimeout(tick, 2000);
})();
`;

/** A small shield icon (also keeps the browser from asking for /favicon.ico outside the secret path). */
export const CONSOLE_ICON = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32"><path d="M16 2 4 7v8c0 8 5 13 12 15 7-2 12-7 12-15V7z" fill="#1346b5"/><path d="m10 16 4 4 8-9" stroke="#fff" stroke-width="3" fill="none"/></svg>`;
