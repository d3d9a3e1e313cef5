#!/usr/bin/env python3
"""Generate, insert or check a table of contents for a Markdown file (GitHub anchors).

Usage:
  toc.py FILE                     print the TOC for FILE ('-' or no FILE: read stdin)
  toc.py FILE --write             replace the TOC between <!-- toc --> and <!-- tocstop --> in FILE
  toc.py FILE --check             exit 1 if the TOC between the markers is missing or out of date
  toc.py FILE --json              print the headings as JSON instead of a Markdown list

Exit codes: 0 ok, 1 TOC out of date (--check) or markers missing (--write/--check), 2 bad usage/input.
"""

from __future__ import annotations

import argparse
import json
import re
import sys

sys.dont_write_bytecode = True  # keep the skill folder free of __pycache__

from _markdown import Heading, parse_headings, read_source

START_RE = re.compile(r"^\s*<!--\s*toc\s*-->\s*$", re.IGNORECASE)
STOP_RE = re.compile(r"^\s*<!--\s*tocstop\s*-->\s*$", re.IGNORECASE)


def build_toc(headings: list[Heading], bullet: str, indent: int) -> list[str]:
    if not headings:
        return []
    top = min(h.level for h in headings)
    lines = []
    for heading in headings:
        label = heading.text.replace("[", "\\[").replace("]", "\\]") or heading.slug
        pad = " " * (indent * (heading.level - top))
        lines.append(f"{pad}{bullet} [{label}](#{heading.slug})")
    return lines


def find_markers(lines: list[str]) -> tuple[int, int] | None:
    start = next((i for i, line in enumerate(lines) if START_RE.match(line)), None)
    if start is None:
        return None
    stop = next((i for i in range(start + 1, len(lines)) if STOP_RE.match(lines[i])), None)
    if stop is None:
        raise ValueError(f"found <!-- toc --> on line {start + 1} but no <!-- tocstop --> after it")
    return start, stop


def main() -> int:
    parser = argparse.ArgumentParser(description="Table of contents for a Markdown file (GitHub anchors).")
    parser.add_argument("file", nargs="?", default="-", help="Markdown file; '-' or omitted reads stdin")
    parser.add_argument("--min-level", type=int, default=2, choices=range(1, 7), help="shallowest heading level (default 2: skip the H1 title)")
    parser.add_argument("--max-level", type=int, default=3, choices=range(1, 7), help="deepest heading level (default 3)")
    parser.add_argument("--bullet", default="-", choices=["-", "*", "+"], help="list marker (default '-')")
    parser.add_argument("--indent", type=int, default=2, help="spaces per nesting level (default 2)")
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--write", action="store_true", help="rewrite FILE, replacing the text between <!-- toc --> and <!-- tocstop -->")
    mode.add_argument("--check", action="store_true", help="exit 1 if the TOC between the markers is out of date")
    mode.add_argument("--json", action="store_true", help="print headings as JSON: [{level, text, slug, line}]")
    args = parser.parse_args()

    if args.min_level > args.max_level:
        parser.error("--min-level must not be greater than --max-level")
    if args.write and args.file == "-":
        parser.error("--write needs a FILE (it cannot rewrite stdin)")

    try:
        source = read_source(args.file)
    except (OSError, ValueError) as error:
        sys.stderr.write(f"toc.py: {error}\n")
        return 2

    all_headings = parse_headings(source)
    headings = [h for h in all_headings if args.min_level <= h.level <= args.max_level]

    if args.json:
        payload = [{"level": h.level, "text": h.text, "slug": h.slug, "line": h.line} for h in headings]
        print(json.dumps(payload, ensure_ascii=False, indent=2))
        return 0

    toc = build_toc(headings, args.bullet, args.indent)
    if not args.write and not args.check:
        if not toc:
            sys.stderr.write(f"toc.py: no headings between levels {args.min_level} and {args.max_level}\n")
        else:
            print("\n".join(toc))
        return 0

    lines = source.splitlines()
    try:
        markers = find_markers(lines)
    except ValueError as error:
        sys.stderr.write(f"toc.py: {args.file}: {error}\n")
        return 1
    if markers is None:
        sys.stderr.write(
            f"toc.py: {args.file}: no <!-- toc --> marker; add a line '<!-- toc -->' and a line "
            "'<!-- tocstop -->' where the table of contents should go\n"
        )
        return 1
    start, stop = markers
    current = [line for line in lines[start + 1 : stop] if line.strip()]
    if args.check:
        if current == toc:
            print(f"{args.file}: table of contents is up to date ({len(toc)} entries)")
            return 0
        sys.stderr.write(f"toc.py: {args.file}: table of contents is out of date; run toc.py {args.file} --write\n")
        return 1

    new_lines = lines[: start + 1] + [""] + toc + [""] + lines[stop:]
    newline = "\r\n" if "\r\n" in source else "\n"
    output = newline.join(new_lines) + (newline if source.endswith(("\n", "\r")) else "")
    if output == source:
        print(f"{args.file}: table of contents already up to date ({len(toc)} entries)")
        return 0
    with open(args.file, "rb") as handle:
        bom = handle.read(3) == b"\xef\xbb\xbf"
    with open(args.file, "w", encoding="utf-8-sig" if bom else "utf-8", newline="") as handle:
        handle.write(output)
    print(f"{args.file}: wrote table of contents ({len(toc)} entries)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
