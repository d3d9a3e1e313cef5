#!/usr/bin/env python3
"""csv-stats: per-column statistics for CSV data. JSON in, JSON out (skills-mcp script I/O contract).

Input  (stdin, else the file named by $SKILL_INPUT_FILE): see input_schema in ../SKILL.md.
Output ($SKILL_OUTPUT if set, else stdout): {"rows", "delimiter", "columns": [...], "warnings": [...]}.
Errors: one line on stderr, exit 1. Standard library only; deterministic.
"""

from __future__ import annotations

import csv
import io
import json
import math
import os
import re
import statistics
import sys

DEFAULT_MISSING = ["", "na", "n/a", "null", "none", "nan"]
DELIMITER_CANDIDATES = ",;\t|"
NUMBER_RE = re.compile(r"^[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?$")
INTEGER_RE = re.compile(r"^[+-]?\d+$")
MAX_VALUE_CHARS = 200
MAX_WARNINGS = 10
KNOWN_FIELDS = {"csv", "path", "columns", "delimiter", "header", "top", "missing_values", "max_rows"}


class InputError(Exception):
    """A problem with the caller's input or data: reported on stderr, exit 1."""


def read_input() -> dict:
    raw = ""
    if sys.stdin is not None and not sys.stdin.isatty():
        raw = sys.stdin.buffer.read().decode("utf-8-sig", errors="replace")
    if not raw.strip() and os.environ.get("SKILL_INPUT_FILE"):
        try:
            with open(os.environ["SKILL_INPUT_FILE"], encoding="utf-8-sig") as handle:
                raw = handle.read()
        except OSError as error:
            raise InputError(f"cannot read $SKILL_INPUT_FILE: {error.strerror}") from None
    if not raw.strip():
        raise InputError('no input: send a JSON object on stdin, e.g. {"csv": "a,b\\n1,2\\n"}')
    try:
        data = json.loads(raw)
    except json.JSONDecodeError as error:
        raise InputError(f"input is not valid JSON: {error.msg} at line {error.lineno} column {error.colno}") from None
    if not isinstance(data, dict):
        raise InputError("input must be a JSON object")
    return data


def validate(data: dict) -> dict:
    unknown = sorted(set(data) - KNOWN_FIELDS)
    if unknown:
        raise InputError(f"unknown input field(s): {', '.join(unknown)}; expected some of: {', '.join(sorted(KNOWN_FIELDS))}")
    has_csv, has_path = data.get("csv") is not None, data.get("path") is not None
    if has_csv == has_path:
        raise InputError('give exactly one of "csv" (the CSV text) or "path" (a CSV file)')
    for key in ("csv", "path"):
        if key in data and data[key] is not None and not isinstance(data[key], str):
            raise InputError(f'"{key}" must be a string')
    delimiter = data.get("delimiter")
    if delimiter is not None and (not isinstance(delimiter, str) or len(delimiter) != 1 or delimiter in "\r\n\""):
        raise InputError('"delimiter" must be a single character such as "," ";" "|" or "\\t"')
    header = data.get("header", True)
    if not isinstance(header, bool):
        raise InputError('"header" must be true or false')
    top = data.get("top", 5)
    if not isinstance(top, int) or isinstance(top, bool) or not 0 <= top <= 100:
        raise InputError('"top" must be an integer from 0 to 100')
    max_rows = data.get("max_rows")
    if max_rows is not None and (not isinstance(max_rows, int) or isinstance(max_rows, bool) or max_rows < 1):
        raise InputError('"max_rows" must be a positive integer')
    columns = data.get("columns")
    if columns is not None:
        if not isinstance(columns, list) or not columns:
            raise InputError('"columns" must be a non-empty list of column names or 0-based indexes')
        for item in columns:
            if isinstance(item, bool) or not isinstance(item, (str, int)) or (isinstance(item, int) and item < 0):
                raise InputError(f'"columns" entries must be names or 0-based indexes, got {json.dumps(item)}')
    missing = data.get("missing_values", DEFAULT_MISSING)
    if not isinstance(missing, list) or not all(isinstance(v, str) for v in missing):
        raise InputError('"missing_values" must be a list of strings')
    return {
        "csv": data.get("csv"),
        "path": data.get("path"),
        "delimiter": delimiter,
        "header": header,
        "top": top,
        "max_rows": max_rows,
        "columns": columns,
        "missing": {v.strip().casefold() for v in missing} | {""},
    }


def load_text(options: dict) -> str:
    if options["csv"] is not None:
        return options["csv"].lstrip("\ufeff")
    path = options["path"]
    try:
        with open(path, "rb") as handle:
            data = handle.read()
    except FileNotFoundError:
        raise InputError(f"file not found: {path} (relative paths are resolved from {os.getcwd()})") from None
    except IsADirectoryError:
        raise InputError(f"{path} is a directory, not a CSV file") from None
    except OSError as error:
        raise InputError(f"cannot read {path}: {error.strerror}") from None
    if b"\0" in data[:8192]:
        raise InputError(f"{path} looks binary (contains NUL bytes), not CSV")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        raise InputError(f"{path} is not valid UTF-8 (bad byte at offset {error.start}); re-save it as UTF-8") from None


def detect_delimiter(text: str) -> str:
    sample = text[:65536]
    try:
        return csv.Sniffer().sniff(sample, delimiters=DELIMITER_CANDIDATES).delimiter
    except csv.Error:
        first = next((line for line in sample.splitlines() if line.strip()), "")
        counts = {d: first.count(d) for d in DELIMITER_CANDIDATES}
        best = max(DELIMITER_CANDIDATES, key=lambda d: counts[d])
        return best if counts[best] else ","


def parse_rows(text: str, delimiter: str, limit: int | None) -> list[list[str]]:
    """Non-blank rows, cells stripped; stops after `limit` rows when given."""
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter, strict=True)
    rows = []
    try:
        for row in reader:
            if not row or all(not cell.strip() for cell in row):
                continue
            rows.append([cell.strip() for cell in row])
            if limit is not None and len(rows) >= limit:
                break
    except csv.Error as error:
        hint = " (check for an unbalanced double quote)" if "quote" in str(error) or "end of data" in str(error) or "field larger" in str(error) else ""
        raise InputError(f"invalid CSV at line {reader.line_num}: {error}{hint}") from None
    return rows


def column_names(first: list[str], width: int, header: bool, warnings: list[str]) -> list[str]:
    names, seen = [], {}
    for index in range(width):
        name = first[index] if header and index < len(first) and first[index] else f"column_{index + 1}"
        if header and (index >= len(first) or not first[index]):
            warnings.append(f"column {index} has no header name; called it {name}")
        if name in seen:
            seen[name] += 1
            renamed = f"{name}_{seen[name]}"
            warnings.append(f"duplicate column name {name!r} at index {index}; renamed to {renamed!r}")
            name = renamed
        seen.setdefault(name, 1)
        names.append(name)
    return names


def select(columns: list | None, names: list[str]) -> list[int]:
    if columns is None:
        return list(range(len(names)))
    chosen = []
    for item in columns:
        if isinstance(item, int):
            if item >= len(names):
                raise InputError(f"column index {item} is out of range: the CSV has {len(names)} column(s) (0-{len(names) - 1})")
            chosen.append(item)
        elif item in names:
            chosen.append(names.index(item))
        else:
            raise InputError(f"no column named {item!r}; columns are: {', '.join(names)}")
    return list(dict.fromkeys(chosen))


def number(value: float | int | None):
    """JSON-friendly number: integral values as ints, floats to 12 significant digits."""
    if value is None or isinstance(value, int):
        return value
    if not math.isfinite(value):
        return None
    value = float(f"{value:.12g}")
    return int(value) if value.is_integer() and abs(value) < 1e15 else value


def clip(value: str) -> str:
    return value if len(value) <= MAX_VALUE_CHARS else value[: MAX_VALUE_CHARS - 1] + "\u2026"


def top_values(values: list[str], top: int) -> list[dict]:
    counts: dict[str, int] = {}
    for value in values:
        counts[value] = counts.get(value, 0) + 1
    ranked = sorted(counts.items(), key=lambda item: (-item[1], item[0]))
    return [{"value": clip(value), "count": count} for value, count in ranked[:top]]


def describe(name: str, index: int, cells: list[str], missing_set: set[str], top: int) -> dict:
    present = [cell for cell in cells if cell.casefold() not in missing_set]
    result: dict = {
        "name": name,
        "index": index,
        "type": "empty",
        "count": len(present),
        "missing": len(cells) - len(present),
        "unique": len(set(present)),
    }
    if not present:
        return result
    numeric = [cell for cell in present if NUMBER_RE.match(cell)]
    if len(numeric) == len(present):
        integer = all(INTEGER_RE.match(cell) for cell in present)
        values = [int(cell) if integer else float(cell) for cell in present]
        quartiles = statistics.quantiles(values, n=4, method="inclusive") if len(values) > 1 else [values[0]] * 3
        result.update(
            type="numeric",
            integer=integer,
            min=number(min(values)),
            max=number(max(values)),
            mean=number(statistics.fmean(values)),
            median=number(statistics.median(values)),
            stdev=number(statistics.stdev(values)) if len(values) > 1 else None,
            q1=number(quartiles[0]),
            q3=number(quartiles[2]),
            sum=number(sum(values) if integer else math.fsum(values)),
        )
        return result
    lengths = [len(cell) for cell in present]
    result.update(type="text", min_length=min(lengths), max_length=max(lengths), top=top_values(present, top))
    if numeric:
        examples = sorted({cell for cell in present if not NUMBER_RE.match(cell)})[:3]
        result["numeric_values"] = len(numeric)
        result["non_numeric_examples"] = [clip(example) for example in examples]
    return result


def analyse(options: dict) -> dict:
    text = load_text(options)
    if not text.strip():
        raise InputError("the CSV is empty")
    delimiter = options["delimiter"] or detect_delimiter(text)
    header = options["header"]
    max_rows = options["max_rows"]
    # Read one row past the limit (plus the header) to know whether the data was cut.
    rows = parse_rows(text, delimiter, None if max_rows is None else max_rows + 1 + int(header))
    if not rows:
        raise InputError("the CSV has no rows (only blank lines)")
    warnings: list[str] = []
    first = rows[0] if header else []
    data = rows[1:] if header else rows
    if max_rows is not None and len(data) > max_rows:
        data = data[:max_rows]
        warnings.append(f"stopped after max_rows={max_rows} data rows; statistics cover those rows only")
    width = len(first) if header else max(len(row) for row in data)
    names = column_names(first, width, header, warnings)
    ragged = [(number_, len(row)) for number_, row in enumerate(data, start=2 if header else 1) if len(row) != width]
    for row_number, length in ragged[:MAX_WARNINGS]:
        what = "extra fields ignored" if length > width else "missing fields counted as missing"
        warnings.append(f"row {row_number} has {length} field(s), expected {width}: {what}")
    if len(ragged) > MAX_WARNINGS:
        warnings.append(f"{len(ragged) - MAX_WARNINGS} more row(s) with the wrong number of fields")
    indexes = select(options["columns"], names)
    columns = []
    for index in indexes:
        cells = [row[index] if index < len(row) else "" for row in data]
        columns.append(describe(names[index], index, cells, options["missing"], options["top"]))
    return {
        "rows": len(data),
        "column_count": width,
        "delimiter": delimiter,
        "header": header,
        "columns": columns,
        "warnings": warnings,
    }


def write_output(result: dict) -> None:
    text = json.dumps(result, ensure_ascii=False, indent=2) + "\n"
    target = os.environ.get("SKILL_OUTPUT")
    if target:
        os.makedirs(os.path.dirname(os.path.abspath(target)), exist_ok=True)
        with open(target, "w", encoding="utf-8") as handle:
            handle.write(text)
    else:
        sys.stdout.write(text)


def main() -> int:
    try:
        write_output(analyse(validate(read_input())))
    except InputError as error:
        sys.stderr.write(f"csv-stats: {error}\n")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
