# SPDX-License-Identifier: MIT
"""Which tool printed which part of a post: the finders of every tool, and `auto` (pure).

`hwcrypto parse auto` hands a whole post over as it is.  Every tool's finder looks for
its own lines (their patterns do not overlap: cryptsetup's ``MiB/s`` rows and ``#
Algorithm`` header, openssl's ``Doing``/``type``/``+F:`` lines and ``k`` values, fio's job
reports and ``Disk stats``, fio's JSON, tcrypt's ``testing speed of``), so running them
all and ordering the tables they find by position recognises each table's tool.  Where
two finders claim the same lines, the table that starts first is kept (paste.name_tables).

tcrypt output is found here: a stretch of log lines with tcrypt events (kernel log lines
of other subsystems in between do not end it: `Paste.log_lines`), handed to tcrypt.py.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from pytest_hwcrypto.parsers import cryptsetup, fio, fio_json, openssl
from pytest_hwcrypto.parsers.paste import Paste, is_blank
from pytest_hwcrypto.parsers.tables import Table
from pytest_hwcrypto.parsers.tcrypt import TcryptParseError, parse_tcrypt, read_tcrypt

Finder = Callable[[Paste], list[Table]]

# the CLI's names for the tools, and the tool names tables carry
TOOL_NAMES = {
    "cryptsetup-benchmark": "cryptsetup",
    "openssl-speed": "openssl",
    "fio": "fio",
    "tcrypt": "tcrypt",
    "auto": "auto",
}
SPLITTERS = {"cryptsetup": cryptsetup.SPLITTERS, "openssl": openssl.SPLITTERS}
_DESCRIPTIONS = {
    "cryptsetup": "cryptsetup benchmark output (a '# Algorithm | Key | Encryption | "
    "Decryption' header, rows like 'aes-xts 512b 1234.5 MiB/s 1234.5 MiB/s' or PBKDF2 lines)",
    "openssl": "openssl speed output (a 'type 16 bytes ...' table, 'Doing ...' lines or "
    "-mr '+F:' lines)",
    "fio": "fio output (job reports like 'read: IOPS=..., BW=...' or --output-format=json)",
    "tcrypt": "tcrypt speed results (lines like 'tcrypt: testing speed of ...')",
}
_TCRYPT = re.compile(
    r"tcrypt:|testing speed of|\btest\s*\d+\s*\(\s*\d+\s*(?:bit key|byte blocks)"
    r"|\boperations? in\s*\d+|opers/sec|(?:cycles|nsecs)/operation|could not insert 'tcrypt'"
    # the end of a result a mailer wrapped onto its own line: "seconds (N bytes)", "(N bytes)"
    r"|^\s*(?:seconds\s*)?\(\s*\d+\s*bytes\)\s*$|^\s*(?:\(\S+\)\s*)?(?:en|de)cryption\s*$"
)

_HEADER = re.compile(r"testing speed of")
_BARE = re.compile(r"^\s*tcrypt:\s*$")
_RESULT = re.compile(r"\boperations? in\s*\d+|opers/sec|(?:cycles|nsecs)/operation")


def splitters(tool: str) -> list[re.Pattern[str]]:
    """The cut points of `tool` ('auto': of every tool) for paste.read_paste."""
    if tool == "auto":
        return [pattern for patterns in SPLITTERS.values() for pattern in patterns]
    return list(SPLITTERS.get(tool, ()))


def find_tables(paste: Paste, tool: str) -> list[Table]:
    """The tables of `tool` in the paste ('auto': of every tool), unordered."""
    finders: dict[str, list[Finder]] = {
        "cryptsetup": [cryptsetup.find_tables],
        "openssl": [openssl.find_tables],
        "fio": [fio.find_tables, fio_json.find_tables],
        "tcrypt": [find_tcrypt_tables],
    }
    chosen = [f for fs in finders.values() for f in fs] if tool == "auto" else finders[tool]
    return [table for finder in chosen for table in finder(paste)]


def describe(tool: str) -> str:
    """What was looked for, for the error when nothing is found."""
    if tool == "auto":
        return "no cryptsetup benchmark, openssl speed, fio or tcrypt table"
    return f"no {_DESCRIPTIONS[tool]}"


def find_tcrypt_tables(paste: Paste) -> list[Table]:
    """Each tcrypt test (a 'testing speed of' header and its results), parsed by tcrypt.py.

    A stretch of tcrypt log lines is cut at every header: one header is one algorithm,
    driver and direction, as one `openssl speed` run is one table.
    """
    tables = []
    first: int | None = None
    last = 0
    for index, line in enumerate(paste.lines):
        if _TCRYPT.search(line):
            if first is not None and _HEADER.search(line) and _has_result(paste, first, last):
                # pr_info("\ntesting speed...") leaves a bare "tcrypt:" line before it
                bare = last if _BARE.match(paste.lines[last]) and last > first else None
                tables.append(_tcrypt_table(paste, first, bare - 1 if bare else last))
                first = bare
            if first is None:
                first = index
            last = index
        elif first is not None and not (is_blank(line) or index in paste.log_lines):
            tables.append(_tcrypt_table(paste, first, last))
            first = None
    if first is not None:
        tables.append(_tcrypt_table(paste, first, last))
    return [table for table in tables if not table.empty]


def _has_result(paste: Paste, first: int, last: int) -> bool:
    return any(_RESULT.search(line) for line in paste.lines[first : last + 1])


def _tcrypt_table(paste: Paste, first: int, last: int) -> Table:
    table = Table("tcrypt", first, last)
    results = read_tcrypt(paste.text(first, last))
    table.measurements = results.measurements
    table.records.extend(results.cycles)
    return table


def tcrypt_reason(text: str, source_name: str) -> str | None:
    """tcrypt.py's own explanation of why `text` has no result (cycles, failed tests)."""
    try:
        parse_tcrypt(text, source_name)
    except TcryptParseError as error:
        return str(error)
    return None
