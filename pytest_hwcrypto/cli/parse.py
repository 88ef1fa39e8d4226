# SPDX-License-Identifier: MIT
"""`hwcrypto parse TOOL FILE|-`: read pasted tool output into results (schema pytest-hwcrypto/1).

    hwcrypto parse auto post.txt                 # every table of a forum post, as text
    hwcrypto parse cryptsetup-benchmark - --json < bench.txt
    hwcrypto parse openssl-speed post.txt --table 2 --json > table2.json

The parsing itself is pure (pytest_hwcrypto/parsers/parse.py); this module reads the file,
prints, and turns every user mistake -- a missing file, text with no table, a table
number the post does not have -- into one line on stderr and exit code 2, never a
traceback.  Warnings (a row cut short, a repeated line) go to stderr and do not change
the exit code.  cli/__init__.py registers `add_parser`.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from pytest_hwcrypto.model.results import Measurement, Results
from pytest_hwcrypto.parsers.parse import (
    TOOLS,
    ParsedDocument,
    ParseError,
    parse_text,
    select_table,
    to_results,
)
from pytest_hwcrypto.units import format_mib_s_as_tools_print
from pytest_hwcrypto.usage import UsageError

_STDIN = "-"


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register `hwcrypto parse` (cli/__init__.py lists this in `_SUBCOMMANDS`)."""
    parser = sub.add_parser(
        "parse",
        help="read pasted cryptsetup/openssl/fio/tcrypt output into results",
        description="Read tool output as pasted into a post or a bug report: every table, "
        "labelled and numbered from 0, with the findings the text supports.",
    )
    parser.add_argument("tool", choices=TOOLS, help="which tool printed it; auto recognises")
    parser.add_argument("file", metavar="FILE", help="the text to read, or - for stdin")
    parser.add_argument("--table", type=int, default=None, metavar="N", help="only table N")
    parser.add_argument("--json", action="store_true", help="results JSON (pytest-hwcrypto/1)")
    parser.set_defaults(func=cmd_parse)


def cmd_parse(args: argparse.Namespace) -> int:
    try:
        name, text = _read(args.file)
        document = parse_text(args.tool, text, name)
        results = to_results(document)
        if args.table is not None:
            results = select_table(results, args.table, name)
    except ParseError as error:
        raise UsageError(str(error)) from None
    for warning in _warnings(results):
        sys.stderr.write(f"hwcrypto: warning: {warning}\n")
    if args.json:
        json.dump(results.to_json(), sys.stdout, indent=2, ensure_ascii=False, allow_nan=False)
        sys.stdout.write("\n")
    else:
        sys.stdout.write("\n".join(format_results(results, document)) + "\n")
    return 0


def _read(file: str) -> tuple[str, str]:
    """The name to report and the text; undecodable bytes become U+FFFD, not an error."""
    if file == _STDIN:
        return "<stdin>", sys.stdin.buffer.read().decode("utf-8", errors="replace")
    try:
        data = Path(file).read_bytes()
    except OSError as error:
        raise ParseError(f"{file}: cannot read: {error.strerror or error}") from None
    return file, data.decode("utf-8", errors="replace")


def _warnings(results: Results) -> list[str]:
    paste = results.extra.get("paste", {})
    warnings = paste.get("warnings", []) if isinstance(paste, dict) else []
    return [str(warning) for warning in warnings]


def format_results(results: Results, document: ParsedDocument) -> list[str]:
    """The human table: per table its header, measurements and records, then findings."""
    paste = results.extra.get("paste", {})
    tables = paste.get("tables", []) if isinstance(paste, dict) else []
    lines = [f"{document.source_name}: {len(document.tables)} table(s) ({document.tool})"]
    for table in tables:
        index = table.get("table")
        label = f'  "{table["label"]}"' if table.get("label") else ""
        first, last = table.get("lines", [0, 0])
        lines.append(f"table {index}  {table.get('tool')}{label}  (lines {first}-{last})")
        command = table.get("command")
        if isinstance(command, dict):
            lines.append(f"  command: {command.get('text')}")
        rows = [m for m in results.measurements if m.extra.get("table") == index]
        lines.extend(_measurement_lines(rows))
        for owner, record in document.records():
            if owner.index == index:
                lines.append(f"  {record.describe()}")
    for finding in results.findings:
        lines.append(f"finding {finding.kind}: {finding.detail}")
    return lines


def _measurement_lines(rows: list[Measurement]) -> list[str]:
    """Aligned columns: algorithm, key, block size, op, MiB/s, driver and IOPS if known."""
    cells = []
    for m in rows:
        notes = [m.driver] if m.driver else []
        iops = m.extra.get("iops")
        if isinstance(iops, (int, float)):
            notes.append(f"{iops:.4g} IOPS")
        cells.append(
            (
                m.algorithm,
                f"{m.key_bits}-bit" if m.key_bits is not None else "",
                f"{m.block_size} B" if m.block_size is not None else "",
                m.op,
                f"{format_mib_s_as_tools_print(m.bytes_per_second)} MiB/s",
                "  ".join(notes),
            )
        )
    if not cells:
        return []
    widths = [max(len(row[column]) for row in cells) for column in range(6)]
    shown = [column for column in range(6) if widths[column]]  # no empty columns
    return [
        "  "
        + "  ".join(
            row[column].rjust(widths[column])
            if column in (2, 4)
            else row[column].ljust(widths[column])
            for column in shown
        ).rstrip()
        for row in cells
    ]
