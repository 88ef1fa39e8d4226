# SPDX-License-Identifier: MIT
"""Parse a pasted post into tables, measurements, records and findings (pure: text in).

The one entry point behind `hwcrypto parse`:

    document = parse_text("auto", text, "post.txt")
    results = to_results(document)          # schema pytest-hwcrypto/1
    table_1 = select_table(results, 1)      # only what table 1 holds

Every measurement carries ``table`` (0-based, order of appearance) and ``label`` (the
line above the table) in its `extra`, so both appear in the JSON, and so does the command
line above the table when the post has one.  What is not a measurement (PBKDF, sign/verify
rows, fio disks), the tables themselves and every warning go under the results' ``paste``
key, which `hwcrypto compare` and older readers keep as it is.

A text with no recognisable table raises `ParseError`, whose message names the file and
the reason; nothing else is raised for any text (the property test feeds it noise).
"""

from __future__ import annotations

import copy
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from pytest_hwcrypto.model.results import Finding, Measurement, Results
from pytest_hwcrypto.parsers import detect, findings, fio, openssl
from pytest_hwcrypto.parsers.paste import Paste, name_tables, read_paste
from pytest_hwcrypto.parsers.tables import Command, ParseError, Record, Table

__all__ = ["ParseError", "ParsedDocument", "parse_text", "select_table", "to_results"]
TOOLS = tuple(detect.TOOL_NAMES)
_TOOL_TITLES = {
    "cryptsetup": "cryptsetup-benchmark",
    "openssl": "openssl-speed",
    "fio": "fio",
    "tcrypt": "tcrypt",
}


@dataclass
class ParsedDocument:
    """What a post holds: its tables in order, the findings they support, every warning."""

    source_name: str
    tool: str
    tables: list[Table]
    findings: list[Finding]
    warnings: list[str]
    origins: tuple[int, ...]

    @property
    def measurements(self) -> list[Measurement]:
        return [measurement for table in self.tables for measurement in table.measurements]

    def records(self) -> Iterator[tuple[Table, Record]]:
        for table in self.tables:
            for record in table.records:
                yield table, record


def parse_text(tool: str, text: str, source_name: str = "<input>") -> ParsedDocument:
    """Read `text` as output of `tool` (a name of `TOOLS`; 'auto' recognises each table)."""
    name = detect.TOOL_NAMES.get(tool)
    if name is None:
        raise ParseError(f"{source_name}: unknown tool {tool!r} (choose from {', '.join(TOOLS)})")
    if not text.strip():
        raise ParseError(f"{source_name}: empty input, nothing to parse")
    paste = read_paste(text, source_name, detect.splitters(name))
    tables = name_tables(paste, detect.find_tables(paste, name))
    if not tables:
        raise ParseError(_nothing_found(text, source_name, name))
    fio_command: Command | None = None
    for table in tables:
        if table.tool == "openssl":
            openssl.apply_command(table, table.command)
        if table.tool == "fio":
            # a run shown without its command (a loop's `| grep READ`) ran like the one above
            fio_command = table.command or _command_above(paste, table) or fio_command
            fio.apply_command(table, fio_command)
        for measurement in table.measurements:
            measurement.extra = {**_placement(table), **measurement.extra}
    return ParsedDocument(
        source_name=source_name,
        tool=name,
        tables=tables,
        findings=findings.find(tables),
        warnings=[warning for table in tables for warning in table.warnings],
        origins=paste.origins,
    )


def _command_above(paste: Paste, table: Table) -> Command | None:
    """The nearest command line of the table's tool above it, anywhere in the post."""
    for line in range(table.first - 1, -1, -1):
        command = paste.commands.get(line)
        if command is not None and command.program == table.tool:
            return command
    return None


def _placement(table: Table) -> dict[str, Any]:
    placement: dict[str, Any] = {"table": table.index, "label": table.label}
    if table.command is not None:
        placement["command"] = table.command.text
    return placement


def _nothing_found(text: str, source_name: str, tool: str) -> str:
    reason = detect.describe(tool)
    if tool == "tcrypt":
        own = detect.tcrypt_reason(text, source_name)
        if own is not None:
            return own
    if tool != "auto":
        paste = read_paste(text, source_name, detect.splitters("auto"))
        others = sorted({table.tool for table in detect.find_tables(paste, "auto")})
        if others:
            names = ", ".join(_TOOL_TITLES[other] for other in others)
            return f"{source_name}: {reason}; it holds {names} output (try 'auto')"
    return f"{source_name}: {reason}"


def to_results(document: ParsedDocument) -> Results:
    """The document as a results file (schema pytest-hwcrypto/1)."""
    tables = []
    for table in document.tables:
        first = document.origins[table.first] if table.first < len(document.origins) else 0
        last = document.origins[table.last] if table.last < len(document.origins) else first
        tables.append(table.summary_json(first, last))
    records = [{**_placement(table), **record.to_json()} for table, record in document.records()]
    paste: dict[str, Any] = {
        "file": document.source_name,
        "tool": document.tool,
        "tables": tables,
        "records": records,
        "warnings": list(document.warnings),
    }
    return Results(
        measurements=list(document.measurements),
        findings=list(document.findings),
        extra={"paste": paste},
    )


def table_indices(results: Results) -> list[int]:
    """The table numbers a results file from `to_results` holds."""
    indices = {m.extra.get("table") for m in results.measurements}
    paste = results.extra.get("paste")
    if isinstance(paste, dict):
        for table in paste.get("tables", []):
            if isinstance(table, dict):
                indices.add(table.get("table"))
    return sorted(index for index in indices if isinstance(index, int))


def select_table(results: Results, index: int, source_name: str = "<results>") -> Results:
    """Only table `index` of a parsed post: its measurements, records and findings.

    A finding about two tables (storage-bound) is kept for either.  ParseError names
    `source_name` and the tables there are when there is no such table.
    """
    indices = table_indices(results)
    if index not in indices:
        have = (
            "no tables"
            if not indices
            else "only table 0"
            if indices == [0]
            else f"tables 0..{indices[-1]}"
        )
        raise ParseError(f"{source_name}: no table {index} (it has {have})")

    def wanted(extra: dict[str, Any]) -> bool:
        tables = extra.get("tables")
        return extra.get("table") == index or (isinstance(tables, list) and index in tables)

    extra = copy.deepcopy(results.extra)
    paste = extra.get("paste")
    if isinstance(paste, dict):
        for key in ("tables", "records"):
            items = paste.get(key)
            if isinstance(items, list):
                paste[key] = [item for item in items if isinstance(item, dict) and wanted(item)]
    return Results(
        kernel=dict(results.kernel),
        inventory=list(results.inventory),
        measurements=[copy.deepcopy(m) for m in results.measurements if wanted(m.extra)],
        findings=[copy.deepcopy(f) for f in results.findings if wanted(f.extra)],
        extra=extra,
    )
