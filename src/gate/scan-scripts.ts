import { open } from 'node:fs/promises';
import path from 'node:path';
import type { Skill, SkillFile } from '../skills/types.js';
import { RC_MENTION, RISK_PATTERNS, type RiskFinding } from './risk-patterns.js';

/** Reads at most `maxBytes` bytes from the start of a file. Injectable for tests and caching callers. */
export type ReadPrefix = (absPath: string, maxBytes: number) => Promise<Uint8Array>;

export interface ScanOptions {
  readPrefix?: ReadPrefix;
  /** Bytes scanned per file (default 512 KiB); the rest of a larger file is not scanned. */
  maxFileBytes?: number;
  /** Bytes scanned per skill (default 8 MiB). */
  maxTotalBytes?: number;
}

/** What the scan of one skill found. Depends only on file contents: cache it per `bundle_sha256`. */
export interface ScriptScan {
  findings: RiskFinding[];
  /** Script files scanned (relative paths). */
  scanned: string[];
  /** Script files not (fully) scanned, and why. */
  skipped: { path: string; reason: 'binary' | 'truncated' | 'over_budget' | 'unreadable' }[];
}

const SCRIPT_EXT =
  /\.(?:py|pyw|js|mjs|cjs|ts|mts|cts|sh|bash|zsh|ksh|fish|command|rb|pl|pm|php|ps1|psm1|bat|cmd|lua|r|jl|tcl|awk|applescript)$/i;
/** Long lines are scanned in windows of this size, overlapping by more than any pattern can span. */
const WINDOW = 4096;

/** A file the guard scans: the entry point, anything under `scripts/`, a script extension, or an exec bit. */
export function isScriptFile(file: SkillFile, entryPoint?: string): boolean {
  return (
    file.path === entryPoint ||
    file.path.startsWith('scripts/') ||
    SCRIPT_EXT.test(file.path) ||
    (file.mode & 0o111) !== 0
  );
}

/** Pattern findings in one text, with 1-based lines. Pure. */
export function scanScriptText(file: string, text: string): RiskFinding[] {
  const findings: RiskFinding[] = [];
  text.split(/\r\n|\n|\r/).forEach((line, i) => {
    const hits = new Set<string>();
    for (const chunk of windows(line)) {
      for (const p of RISK_PATTERNS) {
        const m = hits.has(p.rule) ? null : p.regex.exec(chunk);
        if (m === null) continue;
        hits.add(p.rule);
        findings.push({ rule: p.rule, level: p.level, message: p.describe(m[0]), path: file, line: i + 1 });
      }
      const rc = hits.has('shell-rc-write') || hits.has('shell-rc-reference') ? null : RC_MENTION.exec(chunk);
      if (rc !== null) {
        hits.add('shell-rc-reference');
        const message = `refers to shell startup file ${rc[0]}`;
        findings.push({ rule: 'shell-rc-reference', level: 'medium', message, path: file, line: i + 1 });
      }
    }
  });
  return findings;
}

/** Scans the script files of a skill (read from `skill.dir`), with per-file and per-skill byte caps. */
export async function scanSkillScripts(skill: Skill, options: ScanOptions = {}): Promise<ScriptScan> {
  const readPrefix = options.readPrefix ?? readFilePrefix;
  const maxFile = options.maxFileBytes ?? 512 * 1024;
  let budget = options.maxTotalBytes ?? 8 * 1024 * 1024;
  const scan: ScriptScan = { findings: [], scanned: [], skipped: [] };
  for (const file of skill.files.filter((f) => isScriptFile(f, skill.entryPoint))) {
    if (budget <= 0 || file.path.split('/').includes('..') || path.isAbsolute(file.path)) {
      scan.skipped.push({ path: file.path, reason: 'over_budget' });
      continue;
    }
    const want = Math.min(file.size, maxFile, budget);
    let bytes: Uint8Array;
    try {
      bytes = await readPrefix(path.join(skill.dir, file.path), want);
    } catch {
      scan.skipped.push({ path: file.path, reason: 'unreadable' });
      continue;
    }
    budget -= bytes.length;
    if (bytes.subarray(0, 8000).includes(0)) {
      scan.skipped.push({ path: file.path, reason: 'binary' });
      if (file.path === skill.entryPoint || (file.mode & 0o111) !== 0) {
        scan.findings.push(incomplete(file.path, 'is an executable binary the scan cannot read'));
      }
      continue;
    }
    scan.findings.push(...scanScriptText(file.path, new TextDecoder().decode(bytes)));
    scan.scanned.push(file.path);
    if (bytes.length < file.size) {
      scan.skipped.push({ path: file.path, reason: 'truncated' });
      scan.findings.push(
        incomplete(file.path, `was scanned only in part (${bytes.length} of ${file.size} bytes)`),
      );
    }
  }
  const unscanned = scan.skipped.filter((s) => s.reason === 'over_budget' || s.reason === 'unreadable');
  if (unscanned.length > 0) {
    const names = unscanned.map((s) => s.path);
    const more =
      names.length === 1 ? 'was not scanned' : `and ${names.length - 1} more scripts were not scanned`;
    scan.findings.push(incomplete(names[0] ?? '', more));
  }
  return scan;
}

function incomplete(file: string, what: string): RiskFinding {
  return { rule: 'scan-incomplete', level: 'medium', message: what, path: file };
}

/** Long (minified) lines are scanned in overlapping windows so the regexes stay linear-ish. */
function* windows(line: string): Generator<string> {
  if (line.length <= WINDOW) {
    yield line;
    return;
  }
  for (let at = 0; at < line.length; at += WINDOW - 1024) yield line.slice(at, at + WINDOW);
}

async function readFilePrefix(absPath: string, maxBytes: number): Promise<Uint8Array> {
  const handle = await open(absPath, 'r');
  try {
    const buffer = Buffer.alloc(maxBytes);
    const { bytesRead } = await handle.read(buffer, 0, maxBytes, 0);
    return buffer.subarray(0, bytesRead);
  } finally {
    await handle.close();
  }
}
