#!/usr/bin/env node
// markdown-report: turn a title, sections, bullet lists and tables into report.md (+ report.html).
// JSON in, JSON out (skills-mcp script I/O contract):
//   input  stdin, else the file named by $SKILL_INPUT_FILE
//   files  written to $SKILL_FILES_DIR (created if missing; default ./files)
//   result $SKILL_OUTPUT if set, else stdout
//   errors one line on stderr, exit code 1
// Node standard library only; deterministic (no clock, no randomness).
import { Buffer } from 'node:buffer';
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import process from 'node:process';

import { escapeHtml, htmlDocument, renderBlocks, renderInline } from './render-html.mjs';

const FORMATS = ['md', 'html'];
const ALIGNS = ['left', 'center', 'right'];
const FILENAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;
const NUMBER = /^[+-]?(?:\d+(?:[.,]\d+)*|\.\d+)(?:[eE][+-]?\d+)?%?$/;
const TOP_FIELDS = [
  'title',
  'subtitle',
  'author',
  'date',
  'summary',
  'toc',
  'sections',
  'formats',
  'filename',
];
const SECTION_FIELDS = ['heading', 'body', 'bullets', 'table'];
const TABLE_FIELDS = ['columns', 'rows', 'align', 'caption'];
const MAX_ROWS = 10000;

class InputError extends Error {}

const fail = (path, message) => {
  throw new InputError(`${path}: ${message}`);
};

function checkFields(value, allowed, path) {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) fail(path, 'must be an object');
  const unknown = Object.keys(value).filter((key) => !allowed.includes(key));
  if (unknown.length) fail(path, `unknown field(s) ${unknown.join(', ')}; allowed: ${allowed.join(', ')}`);
}

function optionalString(value, path, { required = false, max = 100000 } = {}) {
  if (value === undefined || value === null) {
    if (required) fail(path, 'is required');
    return undefined;
  }
  if (typeof value !== 'string') fail(path, 'must be a string');
  if (required && !value.trim()) fail(path, 'must not be empty');
  if (value.length > max) fail(path, `is longer than ${max} characters`);
  return value;
}

function stringList(value, path) {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) fail(path, 'must be a list of strings');
  value.forEach((item, i) => typeof item === 'string' || fail(`${path}[${i}]`, 'must be a string'));
  return value;
}

function cellText(value, path) {
  if (value === null || value === undefined) return '';
  if (typeof value === 'string') return value;
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) fail(path, 'must be a finite number');
    return String(value);
  }
  if (typeof value === 'boolean') return value ? 'yes' : 'no';
  return fail(path, 'must be a string, number, boolean or null');
}

function validateTable(table, path) {
  checkFields(table, TABLE_FIELDS, path);
  const columns = stringList(table.columns, `${path}.columns`);
  if (!columns.length) fail(`${path}.columns`, 'must list at least one column name');
  if (!Array.isArray(table.rows)) fail(`${path}.rows`, 'must be a list of rows (each a list of cells)');
  if (table.rows.length > MAX_ROWS)
    fail(`${path}.rows`, `has ${table.rows.length} rows; the limit is ${MAX_ROWS}`);
  const rows = table.rows.map((row, r) => {
    if (!Array.isArray(row)) fail(`${path}.rows[${r}]`, 'must be a list of cells');
    if (row.length !== columns.length) {
      fail(`${path}.rows[${r}]`, `has ${row.length} cell(s) but the table has ${columns.length} column(s)`);
    }
    return row.map((cell, c) => cellText(cell, `${path}.rows[${r}][${c}]`));
  });
  let align = table.align;
  if (align === undefined || align === null) {
    // Right-align columns whose non-empty cells are all numbers.
    align = columns.map((_, c) => {
      const cells = rows.map((row) => row[c].trim()).filter(Boolean);
      return cells.length && cells.every((cell) => NUMBER.test(cell)) ? 'right' : 'left';
    });
  } else {
    if (!Array.isArray(align) || align.length !== columns.length) {
      fail(`${path}.align`, `must list one of ${ALIGNS.join('/')} per column (${columns.length})`);
    }
    align.forEach(
      (a, i) => ALIGNS.includes(a) || fail(`${path}.align[${i}]`, `must be one of ${ALIGNS.join(', ')}`),
    );
  }
  return { columns, rows, align, caption: optionalString(table.caption, `${path}.caption`, { max: 1000 }) };
}

function validate(input) {
  checkFields(input, TOP_FIELDS, 'input');
  const report = {
    title: optionalString(input.title, 'title', { required: true, max: 300 }).trim(),
    subtitle: optionalString(input.subtitle, 'subtitle', { max: 500 }),
    author: optionalString(input.author, 'author', { max: 300 }),
    date: optionalString(input.date, 'date', { max: 100 }),
    summary: optionalString(input.summary, 'summary'),
    toc: input.toc ?? false,
    formats: input.formats ?? FORMATS,
    filename: input.filename ?? 'report',
  };
  if (typeof report.toc !== 'boolean') fail('toc', 'must be true or false');
  if (!Array.isArray(report.formats) || !report.formats.length) fail('formats', 'must be a non-empty list');
  report.formats.forEach((f, i) => FORMATS.includes(f) || fail(`formats[${i}]`, `must be "md" or "html"`));
  report.formats = FORMATS.filter((f) => report.formats.includes(f));
  if (
    typeof report.filename !== 'string' ||
    !FILENAME.test(report.filename) ||
    /\.(md|html)$/i.test(report.filename)
  ) {
    fail(
      'filename',
      'must be a plain base name like "report" or "q3-sales" (letters, digits, . _ -; no extension, no folders)',
    );
  }
  if (!Array.isArray(input.sections) || !input.sections.length) fail('sections', 'must be a non-empty list');
  if (input.sections.length > 200) fail('sections', 'has more than 200 entries');
  report.sections = input.sections.map((section, i) => {
    const path = `sections[${i}]`;
    checkFields(section, SECTION_FIELDS, path);
    const result = {
      heading: optionalString(section.heading, `${path}.heading`, { required: true, max: 300 }).trim(),
      body: optionalString(section.body, `${path}.body`),
      bullets: stringList(section.bullets, `${path}.bullets`),
      table:
        section.table === undefined || section.table === null
          ? undefined
          : validateTable(section.table, `${path}.table`),
    };
    if (/[\r\n]/.test(result.heading)) fail(`${path}.heading`, 'must be a single line');
    return result;
  });
  return report;
}

/** GitHub-style anchors, deduplicated with -1, -2 suffixes. */
function createSlugger() {
  const seen = new Map();
  return (text) => {
    const base = text
      .toLowerCase()
      .replace(/[^\p{L}\p{M}\p{N}\p{Pc}\- ]/gu, '')
      .replaceAll(' ', '-');
    let slug = base;
    while (seen.has(slug)) {
      seen.set(base, seen.get(base) + 1);
      slug = `${base}-${seen.get(base)}`;
    }
    seen.set(slug, 0);
    return slug;
  };
}

const plainHeading = (text) => text.replace(/[`*_]/g, '').replace(/\[([^\]]*)\]\([^)]*\)/g, '$1');
const mdCell = (text) => text.replaceAll('|', '\\|').replace(/\r?\n/g, '<br>');
const MD_ALIGN = { left: ':--', center: ':-:', right: '--:' };

function toMarkdown(report, slugs) {
  const out = [`# ${report.title}`, ''];
  if (report.subtitle) out.push(`_${report.subtitle.trim()}_`, '');
  const meta = [report.author && `**Author:** ${report.author}`, report.date && `**Date:** ${report.date}`];
  if (meta.some(Boolean)) out.push(meta.filter(Boolean).join(' · '), '');
  if (report.summary) out.push(report.summary.trim(), '');
  if (report.toc) {
    out.push('## Contents', '');
    report.sections.forEach((s, i) => out.push(`- [${s.heading}](#${slugs[i]})`));
    out.push('');
  }
  for (const section of report.sections) {
    out.push(`## ${section.heading}`, '');
    if (section.body?.trim()) out.push(section.body.trim(), '');
    if (section.bullets.length) out.push(...section.bullets.map((b) => `- ${b.trim()}`), '');
    if (section.table) {
      const { columns, rows, align, caption } = section.table;
      out.push(`| ${columns.map(mdCell).join(' | ')} |`);
      out.push(`| ${align.map((a) => MD_ALIGN[a]).join(' | ')} |`);
      for (const row of rows) out.push(`| ${row.map(mdCell).join(' | ')} |`);
      out.push('');
      if (caption) out.push(`_${caption.trim()}_`, '');
    }
  }
  return `${out.join('\n').trimEnd()}\n`;
}

function toHtml(report, slugs) {
  const out = [`<h1>${renderInline(report.title)}</h1>`];
  if (report.subtitle) out.push(`<p class="subtitle">${renderInline(report.subtitle.trim())}</p>`);
  const meta = [
    report.author && `Author: ${escapeHtml(report.author)}`,
    report.date && `Date: ${escapeHtml(report.date)}`,
  ];
  if (meta.some(Boolean)) out.push(`<p class="meta">${meta.filter(Boolean).join(' · ')}</p>`);
  if (report.summary) out.push(renderBlocks(report.summary));
  if (report.toc) {
    const items = report.sections.map(
      (s, i) => `<li><a href="#${slugs[i]}">${renderInline(s.heading)}</a></li>`,
    );
    out.push(`<nav><h2>Contents</h2><ul>${items.join('')}</ul></nav>`);
  }
  report.sections.forEach((section, i) => {
    out.push(`<section>`, `<h2 id="${escapeHtml(slugs[i])}">${renderInline(section.heading)}</h2>`);
    if (section.body?.trim()) out.push(renderBlocks(section.body));
    if (section.bullets.length)
      out.push(`<ul>${section.bullets.map((b) => `<li>${renderInline(b.trim())}</li>`).join('')}</ul>`);
    if (section.table) {
      const { columns, rows, align, caption } = section.table;
      const style = (c) => (align[c] === 'left' ? '' : ` style="text-align:${align[c]}"`);
      const cell = (tag, text, c) =>
        `<${tag}${style(c)}>${renderInline(text).replace(/\r?\n/g, '<br>')}</${tag}>`;
      out.push('<table>');
      if (caption) out.push(`<caption>${renderInline(caption.trim())}</caption>`);
      out.push(`<thead><tr>${columns.map((c, j) => cell('th', c, j)).join('')}</tr></thead>`);
      out.push('<tbody>');
      for (const row of rows) out.push(`<tr>${row.map((c, j) => cell('td', c, j)).join('')}</tr>`);
      out.push('</tbody>', '</table>');
    }
    out.push('</section>');
  });
  return htmlDocument(report.title, out.join('\n'));
}

/** Words of prose: title, subtitle, summary, headings, bodies, bullets (not tables or code blocks). */
function countWords(report) {
  const prose = [report.title, report.subtitle, report.summary]
    .concat(report.sections.flatMap((s) => [s.heading, s.body, ...s.bullets]))
    .filter(Boolean)
    .join('\n')
    .replace(/^\s{0,3}(`{3,}|~{3,})[\s\S]*?^\s{0,3}\1/gm, ' ')
    .replace(/\]\([^)]*\)/g, ']');
  return (prose.match(/[\p{L}\p{N}]+(?:['’_.-][\p{L}\p{N}]+)*/gu) ?? []).length;
}

async function readInput() {
  let raw = '';
  if (!process.stdin.isTTY) {
    const chunks = [];
    for await (const chunk of process.stdin) chunks.push(chunk);
    raw = Buffer.concat(chunks).toString('utf8');
  }
  if (!raw.trim() && process.env.SKILL_INPUT_FILE) {
    try {
      raw = readFileSync(process.env.SKILL_INPUT_FILE, 'utf8');
    } catch (error) {
      throw new InputError(`cannot read $SKILL_INPUT_FILE: ${error.code ?? error.message}`);
    }
  }
  raw = raw.replace(/^\uFEFF/, '');
  if (!raw.trim())
    throw new InputError('no input: send a JSON object on stdin, e.g. {"title": "...", "sections": [...]}');
  try {
    return JSON.parse(raw);
  } catch (error) {
    throw new InputError(`input is not valid JSON: ${error.message}`);
  }
}

function writeArtifact(dir, name, content) {
  const path = join(dir, name);
  rmSync(path, { force: true }); // never write through a pre-existing file or symlink
  writeFileSync(path, content, { flag: 'wx' });
  const bytes = Buffer.byteLength(content);
  const sha256 = createHash('sha256').update(content).digest('hex');
  return { path: name, media_type: name.endsWith('.md') ? 'text/markdown' : 'text/html', bytes, sha256 };
}

async function main() {
  const report = validate(await readInput());
  const slugger = createSlugger();
  if (report.toc) slugger('Contents'); // the "## Contents" heading takes that anchor first
  const slugs = report.sections.map((s) => slugger(plainHeading(s.heading)));
  const filesDir = resolve(process.env.SKILL_FILES_DIR || 'files');
  mkdirSync(filesDir, { recursive: true });
  const files = [];
  if (report.formats.includes('md'))
    files.push(writeArtifact(filesDir, `${report.filename}.md`, toMarkdown(report, slugs)));
  if (report.formats.includes('html'))
    files.push(writeArtifact(filesDir, `${report.filename}.html`, toHtml(report, slugs)));
  const result = {
    files,
    title: report.title,
    sections: report.sections.length,
    tables: report.sections.filter((s) => s.table).length,
    table_rows: report.sections.reduce((n, s) => n + (s.table?.rows.length ?? 0), 0),
    words: countWords(report),
  };
  const json = `${JSON.stringify(result, null, 2)}\n`;
  if (process.env.SKILL_OUTPUT) {
    mkdirSync(dirname(resolve(process.env.SKILL_OUTPUT)), { recursive: true });
    writeFileSync(process.env.SKILL_OUTPUT, json);
  } else {
    process.stdout.write(json);
  }
}

main().catch((error) => {
  const message =
    error instanceof InputError ? error.message : `unexpected error: ${error?.message ?? error}`;
  process.stderr.write(`markdown-report: ${message}\n`);
  process.exitCode = 1;
});
