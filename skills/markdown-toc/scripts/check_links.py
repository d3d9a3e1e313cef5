#!/usr/bin/env python3
"""Find broken internal links in Markdown files: missing files, missing #anchors, undefined references.

Usage:
  check_links.py FILE [FILE ...]          check each file ('-' reads stdin; relative links resolve from cwd)
  check_links.py docs/*.md --json         machine-readable report

External links (http:, https:, mailto:, ...) are not fetched; this tool works offline.
Exit codes: 0 no broken links, 1 broken links found, 2 bad usage/unreadable file.
"""

from __future__ import annotations

import argparse
import difflib
import json
import os
import re
import sys
from urllib.parse import unquote

sys.dont_write_bytecode = True  # keep the skill folder free of __pycache__

from _markdown import anchors, content_lines, read_source

INLINE_LINK_RE = re.compile(
    r"(!?)\[((?:[^\[\]\\]|\\.|\[[^\]]*\])*)\]"  # [text] or ![alt]
    r"\(\s*(<[^>]*>|(?:[^\s()\\]|\\.|\([^\s()]*\))*)"  # (destination
    r"(?:\s+(?:\"[^\"]*\"|'[^']*'|\([^)]*\)))?\s*\)"  # optional "title")
)
REF_LINK_RE = re.compile(r"(!?)\[((?:[^\[\]\\]|\\.)+)\]\[((?:[^\[\]\\]|\\.)*)\]")
REF_DEF_RE = re.compile(r"^ {0,3}\[((?:[^\[\]\\]|\\.)+)\]:\s*(<[^>]*>|\S+)")
CODE_SPAN_RE = re.compile(r"(`+)(?:.+?)\1")
SCHEME_RE = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*:")
MARKDOWN_EXTENSIONS = (".md", ".markdown", ".mdown", ".mkd")


def label_key(label: str) -> str:
    return " ".join(label.split()).casefold()


def mask_code_spans(line: str) -> str:
    """Blank out `code spans` (keeping columns) so links inside code are ignored."""
    return CODE_SPAN_RE.sub(lambda m: " " * len(m.group(0)), line)


class Checker:
    def __init__(self) -> None:
        self.anchor_cache: dict[str, set[str] | None] = {}
        self.broken: list[dict] = []
        self.links = 0

    def anchors_of(self, path: str) -> set[str] | None:
        if path not in self.anchor_cache:
            try:
                self.anchor_cache[path] = anchors(read_source(path))
            except (OSError, ValueError):
                self.anchor_cache[path] = None
        return self.anchor_cache[path]

    def report(self, file: str, line: int, column: int, target: str, reason: str, needle: str = "", options=()) -> None:
        entry = {"file": file, "line": line, "column": column, "target": target, "reason": reason}
        close = difflib.get_close_matches(needle, list(options), n=1, cutoff=0.6) if needle else []
        if close:
            entry["suggestion"] = close[0]
        self.broken.append(entry)

    def check_target(self, file: str, base_dir: str, own_anchors: set[str], line: int, column: int, target: str) -> None:
        if target.startswith("<") and target.endswith(">"):
            target = target[1:-1]
        if not target or SCHEME_RE.match(target) or target.startswith("//"):
            return
        self.links += 1
        path_part, _, fragment = target.partition("#")
        path_part = unquote(path_part.split("?", 1)[0])
        fragment = unquote(fragment)
        if not path_part:
            if fragment not in own_anchors:
                self.report(file, line, column, target, f"no heading or id '#{fragment}' in this file", fragment, sorted(own_anchors))
            return
        # A leading '/' means the repository root, taken to be the current directory.
        root = os.curdir if path_part.startswith("/") else base_dir
        resolved = os.path.normpath(os.path.join(root, path_part.lstrip("/")))
        if not os.path.exists(resolved):
            parent = os.path.dirname(resolved) or "."
            siblings = sorted(os.listdir(parent)) if os.path.isdir(parent) else []
            self.report(file, line, column, target, f"file not found: {resolved}", os.path.basename(resolved), siblings)
            return
        if fragment and resolved.lower().endswith(MARKDOWN_EXTENSIONS) and os.path.isfile(resolved):
            target_anchors = self.anchors_of(resolved)
            if target_anchors is not None and fragment not in target_anchors:
                self.report(file, line, column, target, f"no heading or id '#{fragment}' in {resolved}", fragment, sorted(target_anchors))

    def check_file(self, file: str) -> None:
        source = read_source(file)
        base_dir = "." if file == "-" else (os.path.dirname(file) or ".")
        display = "<stdin>" if file == "-" else file
        own_anchors = anchors(source)
        lines = list(content_lines(source))
        definitions = {}
        for number, line in lines:
            match = REF_DEF_RE.match(line)
            if match:
                definitions[label_key(match.group(1))] = (number, match.start(2) + 1, match.group(2))
        for number, column, target in definitions.values():
            self.check_target(display, base_dir, own_anchors, number, column, target)
        for number, line in lines:
            if REF_DEF_RE.match(line):
                continue
            masked = mask_code_spans(line)
            for match in INLINE_LINK_RE.finditer(masked):
                self.check_target(display, base_dir, own_anchors, number, match.start(3) + 1, match.group(3))
            for match in REF_LINK_RE.finditer(masked):
                label = match.group(3) or match.group(2)
                if label_key(label) not in definitions:
                    self.links += 1
                    self.report(display, number, match.start() + 1, f"[{label}]", "reference is not defined")


def main() -> int:
    parser = argparse.ArgumentParser(description="Find broken internal links in Markdown files (offline).")
    parser.add_argument("files", nargs="*", default=["-"], help="Markdown files; '-' or none reads stdin")
    parser.add_argument("--json", action="store_true", help="print a JSON report instead of lines")
    args = parser.parse_args()

    checker = Checker()
    for file in args.files:
        try:
            checker.check_file(file)
        except (OSError, ValueError) as error:
            sys.stderr.write(f"check_links.py: {error}\n")
            return 2

    if args.json:
        report = {"files": len(args.files), "links_checked": checker.links, "broken": checker.broken}
        print(json.dumps(report, ensure_ascii=False, indent=2))
    else:
        for entry in checker.broken:
            hint = f" (did you mean '{entry['suggestion']}'?)" if "suggestion" in entry else ""
            print(f"{entry['file']}:{entry['line']}:{entry['column']}: broken link '{entry['target']}': {entry['reason']}{hint}")
        summary = f"{len(args.files)} file(s), {checker.links} internal link(s) checked, {len(checker.broken)} broken"
        print(summary, file=sys.stderr)
    return 1 if checker.broken else 0


if __name__ == "__main__":
    sys.exit(main())
