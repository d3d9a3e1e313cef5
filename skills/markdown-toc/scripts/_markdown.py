#!/usr/bin/env python3
"""Shared Markdown helpers for toc.py and check_links.py (standard library only).

Parses the parts of CommonMark/GitHub Flavored Markdown that matter for tables of contents and
links: ATX and setext headings, fenced code blocks, HTML comments, YAML front matter, and GitHub's
heading-anchor algorithm (github-slugger). Not a full Markdown parser, on purpose.
"""

from __future__ import annotations

import re
import sys
import unicodedata
from dataclasses import dataclass

FENCE_RE = re.compile(r"^ {0,3}(`{3,}|~{3,})(.*)$")
ATX_RE = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$")
SETEXT_RE = re.compile(r"^ {0,3}(=+|-+)[ \t]*$")
NOT_PARAGRAPH_RE = re.compile(r"^ {0,3}(?:[-*+]\s|\d{1,9}[.)]\s|>|\||<|#|$)|^ {4}")
HTML_ID_RE = re.compile(r"""<[a-zA-Z][^>]*?\s(?:id|name)\s*=\s*["']([^"']+)["']""")

# Inline markup, removed to get a heading's text as GitHub renders it.
IMAGE_RE = re.compile(r"!\[([^\]]*)\]\([^)]*\)")
LINK_RE = re.compile(r"\[([^\]]*)\]\([^)]*\)")
REF_LINK_RE = re.compile(r"\[([^\]]*)\]\[[^\]]*\]")
AUTOLINK_RE = re.compile(r"<((?:https?|mailto|ftp):[^>\s]*)>")
TAG_RE = re.compile(r"</?[a-zA-Z][^>]*>")
CODE_RE = re.compile(r"(`+)(.+?)\1")
EMPHASIS_RES = [
    re.compile(r"\*\*(.+?)\*\*"),
    re.compile(r"(?<!\w)__(.+?)__(?!\w)"),
    re.compile(r"\*(.+?)\*"),
    re.compile(r"(?<!\w)_(.+?)_(?!\w)"),
    re.compile(r"~~(.+?)~~"),
]
ESCAPE_RE = re.compile(r"\\([!-/:-@\[-`{-~])")


@dataclass
class Heading:
    level: int
    text: str  # inline Markdown kept, links reduced to their text (for display in a TOC)
    plain: str  # rendered text (for the anchor)
    slug: str  # GitHub anchor, unique within the document
    line: int  # 1-based line number


class Slugger:
    """GitHub's anchor algorithm (github-slugger): lowercase, drop punctuation, spaces to '-', dedupe."""

    def __init__(self) -> None:
        self.seen: dict[str, int] = {}

    @staticmethod
    def base(text: str) -> str:
        kept = []
        for ch in text.lower():
            cat = unicodedata.category(ch)
            if cat[0] in "LNM" or cat == "Pc" or ch in "- ":
                kept.append(ch)
        return "".join(kept).replace(" ", "-")

    def slug(self, text: str) -> str:
        base = self.base(text)
        slug = base
        while slug in self.seen:
            self.seen[base] += 1
            slug = f"{base}-{self.seen[base]}"
        self.seen[slug] = 0
        return slug


def display_text(raw: str) -> str:
    """Heading text for a TOC entry: links and images reduced to their text, HTML tags removed."""
    text = IMAGE_RE.sub(r"\1", raw)
    text = LINK_RE.sub(r"\1", text)
    text = REF_LINK_RE.sub(r"\1", text)
    text = AUTOLINK_RE.sub(r"\1", text)
    text = TAG_RE.sub("", text)
    return text.strip()


def plain_text(raw: str) -> str:
    """Heading text as rendered (what GitHub feeds to the slugger)."""
    text = display_text(raw)
    text = CODE_RE.sub(lambda m: m.group(2).strip(), text)
    for pattern in EMPHASIS_RES:
        text = pattern.sub(r"\1", text)
    return ESCAPE_RE.sub(r"\1", text).strip()


def content_lines(text: str):
    """Yield (line_number, line) for lines outside front matter, fenced code and HTML comments."""
    lines = text.splitlines()
    start = 0
    if lines and lines[0].strip() == "---":
        for i in range(1, len(lines)):
            if lines[i].strip() in ("---", "..."):
                start = i + 1
                break
    fence: tuple[str, int] | None = None
    in_comment = False
    for index in range(start, len(lines)):
        line = lines[index]
        if fence is not None:
            match = FENCE_RE.match(line)
            if match and match.group(1)[0] == fence[0] and len(match.group(1)) >= fence[1]:
                if not match.group(2).strip():
                    fence = None
            continue
        if in_comment:
            if "-->" in line:
                in_comment = False
            continue
        match = FENCE_RE.match(line)
        if match and not (match.group(1)[0] == "`" and "`" in match.group(2)):
            fence = (match.group(1)[0], len(match.group(1)))
            continue
        stripped = line.strip()
        if stripped.startswith("<!--") and "-->" not in stripped[4:]:
            in_comment = True
            continue
        yield index + 1, line


def parse_headings(text: str) -> list[Heading]:
    """Every ATX and setext heading outside code, with unique GitHub anchors."""
    slugger = Slugger()
    headings: list[Heading] = []
    paragraph: list[tuple[int, str]] = []  # current run of plain paragraph lines (setext candidates)
    for number, line in content_lines(text):
        atx = ATX_RE.match(line)
        setext = SETEXT_RE.match(line)
        if atx:
            raw = (atx.group(2) or "").strip()
            level = len(atx.group(1))
        elif setext and paragraph and paragraph[-1][0] == number - 1:
            raw = " ".join(part.strip() for _, part in paragraph)
            level = 1 if setext.group(1)[0] == "=" else 2
            number = paragraph[0][0]
        else:
            if NOT_PARAGRAPH_RE.match(line):
                paragraph = []
            else:
                if paragraph and paragraph[-1][0] != number - 1:
                    paragraph = []
                paragraph.append((number, line))
            continue
        paragraph = []
        plain = plain_text(raw)
        headings.append(Heading(level, display_text(raw), plain, slugger.slug(plain), number))
    return headings


def anchors(text: str) -> set[str]:
    """Every anchor a link can target in the document: heading slugs and HTML id/name attributes."""
    found = {h.slug for h in parse_headings(text)}
    for _, line in content_lines(text):
        found.update(HTML_ID_RE.findall(line))
    return found


def read_source(path: str) -> str:
    """Read a Markdown file (or stdin for '-') as UTF-8, accepting a BOM."""
    if path == "-":
        data = sys.stdin.buffer.read()
    else:
        with open(path, "rb") as handle:
            data = handle.read()
    if b"\0" in data:
        raise ValueError(f"{path}: binary file (contains NUL bytes), not Markdown")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        raise ValueError(f"{path}: not valid UTF-8 (byte {error.start})") from None


if __name__ == "__main__":
    sys.stderr.write("_markdown.py is a helper module: run toc.py or check_links.py instead.\n")
    sys.exit(2)
