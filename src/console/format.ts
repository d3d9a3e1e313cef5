import { escapeForDisplay } from '../escape-for-display.js';
import { html, type Html } from './html.js';

const pad = (n: number) => String(n).padStart(2, '0');

/** Local date and time, to the second (the console runs on the person's machine). */
export function formatTime(ms: number): string {
  const d = new Date(ms);
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
}

export function formatDuration(ms: number | null): string {
  if (ms === null) return '—';
  return ms < 1000 ? `${ms} ms` : `${(ms / 1000).toFixed(ms < 10_000 ? 2 : 1)} s`;
}

/** A hash or id shown short, with the whole value on hover. */
export const short = (hex: string | null, n = 12): Html =>
  hex === null ? html`—` : html`<span class="mono" title="${hex}">${hex.slice(0, n)}</span>`;

/** One line of text from a model or a file name: invisible and bidi characters escaped, clipped. */
export function shown(text: string, max = 200): string {
  const t = escapeForDisplay(text);
  return t.length > max ? `${t.slice(0, max - 1)}…` : t;
}

export type Tone = 'ok' | 'warn' | 'bad' | 'plain';

export const badge = (text: string, tone: Tone): Html => html`<span class="badge ${tone}">${text}</span>`;

/** The tone of a call status, a decision or a risk level. */
export function toneOf(value: string | null): Tone {
  switch (value) {
    case 'ok':
    case 'approved':
    case 'approved_for_session':
    case 'low':
      return 'ok';
    case 'medium':
    case 'pending':
    case 'requested':
    case 'started':
    case 'timeout':
    case 'cancelled':
      return 'warn';
    case null:
      return 'plain';
    default:
      return 'bad';
  }
}
