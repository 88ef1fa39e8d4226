# SPDX-License-Identifier: MIT
"""The shapes every paste parser returns: a table, its typed records, and the one error.

A pasted post is cut into *tables*: one run of one tool (a `cryptsetup benchmark`, an
`openssl speed`, a fio job report, a stretch of tcrypt log).  Each parser
(cryptsetup.py, openssl.py, fio.py, fio_json.py, detect.py for tcrypt) turns the lines it
recognises into `Table`s holding

* `measurements`: throughput figures as the results schema knows them (bytes/s);
* `records`: typed rows that are *not* throughput -- PBKDF iterations, sign/verify
  rates, disk utilisation -- so they can never be mistaken for, or compared as, bytes/s;
* `warnings`: one line each, naming the file and line, for what was read only in part.

`ParseError` is the one error class: a file holding no recognisable table.  Its message
is one line naming the file and the reason, which the CLI prints as it is.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field
from typing import Any, ClassVar

from pytest_hwcrypto.model.results import Measurement


class ParseError(ValueError):
    """No table could be read; the message names the file and the reason, in one line."""


@dataclass
class Record:
    """A typed row that carries no bytes/s; `KIND` says which (results JSON `records[].kind`).

    Subclasses are dataclasses; `to_json` writes their set fields under their own names.
    """

    KIND: ClassVar[str] = "record"

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"kind": self.KIND}
        for item in dataclasses.fields(self):
            value = getattr(self, item.name)
            if value is not None and value != {} and value != []:
                data[item.name] = value
        return data

    def describe(self) -> str:
        """One human line (the `hwcrypto parse` table); subclasses say it better."""
        parts = [f"{key}={value}" for key, value in self.to_json().items() if key != "kind"]
        return f"{self.KIND}: " + ", ".join(parts)


@dataclass
class Command:
    """A command line found in the paste (after its shell prompt), and what its flags say.

    `flags` maps an option to its value, or to True for a switch: ``{"evp": "aes-128-cbc",
    "elapsed": True, "engine": "afalg", "multi": "2"}``; `arguments` are the positional
    words after the subcommand (`openssl speed ... aes-128-cbc` -> ``["aes-128-cbc"]``).
    """

    text: str
    program: str
    subcommand: str | None
    flags: dict[str, str | bool] = field(default_factory=dict)
    arguments: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"text": self.text, "program": self.program}
        if self.subcommand is not None:
            data["subcommand"] = self.subcommand
        data["flags"] = dict(self.flags)
        data["arguments"] = list(self.arguments)
        return data


@dataclass
class Table:
    """One run of one tool, as found in the paste: lines `first`..`last` (inclusive).

    `index`, `label` and `command` are filled in by the paste splitter once every table is
    known (order of appearance; the nearest line above; the command line above, if any).
    `facts` holds what the run says about itself (OpenSSL version and options, -elapsed,
    the engine, fio's version...), written to the results JSON under `tables[]`.
    """

    tool: str
    first: int
    last: int
    measurements: list[Measurement] = field(default_factory=list)
    records: list[Record] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    facts: dict[str, Any] = field(default_factory=dict)
    index: int = -1
    label: str | None = None
    heading: str | None = None
    command: Command | None = None

    @property
    def empty(self) -> bool:
        return not self.measurements and not self.records

    def summary_json(self, first_line: int, last_line: int) -> dict[str, Any]:
        """The table as listed under results JSON `tables[]` (lines are the file's)."""
        data: dict[str, Any] = {
            "table": self.index,
            "tool": self.tool,
            "label": self.label,
            "lines": [first_line, last_line],
            "measurements": len(self.measurements),
            "records": len(self.records),
        }
        if self.heading is not None and self.heading != self.label:
            data["heading"] = self.heading
        if self.command is not None:
            data["command"] = self.command.to_json()
        if self.facts:
            data["facts"] = dict(self.facts)
        return data


def finite_rate(value: float) -> bool:
    """A rate worth recording: finite and not negative (digits alone can overflow to inf)."""
    return math.isfinite(value) and value >= 0.0
