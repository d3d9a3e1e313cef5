// Renders each saved screen (ARTIFACTS_DIR/*.txt, a tmux capture) as a PNG beside it: the text in a <pre>, white on
// black, in a 1280×800 page of Debian's Chromium (headless, no network). Usage: node render-screens.mjs ARTIFACTS_DIR
import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { chromium } from 'playwright-core';

const artifacts = resolve(process.argv[2] ?? '/tmp/ci-artifacts/hosts');
const escape = (text) => text.replace(/[&<>]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;' })[c]);
const page = (text) =>
  '<!doctype html><meta charset="utf-8"><body style="margin:0;background:#111;color:#eee">' +
  '<pre style="margin:0;padding:12px;font:13px/1.3 DejaVu Sans Mono,monospace;white-space:pre">' +
  `${escape(text)}</pre>`;

const screens = readdirSync(artifacts).filter((name) => name.endsWith('.txt'));
const browser = await chromium.launch({
  executablePath: '/usr/bin/chromium',
  headless: true,
  chromiumSandbox: false,
  args: ['--disable-gpu', '--no-first-run', '--disable-background-networking', '--disable-component-update'],
});
try {
  const tab = await browser.newPage({ viewport: { width: 1280, height: 800 } });
  for (const name of screens) {
    await tab.setContent(page(readFileSync(join(artifacts, name), 'utf8')));
    await tab.screenshot({ path: join(artifacts, name.replace(/\.txt$/, '.png')) });
  }
  console.log(`hosts: rendered ${screens.length} screens as PNG in ${artifacts}`);
} finally {
  await browser.close();
}
