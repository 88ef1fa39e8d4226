# SPDX-License-Identifier: MIT
"""dd's closing summary (pure): how many bytes it copied and in how long.

GNU dd ends with `<bytes> bytes (<rounded>) copied, <seconds> s, <rate>` on stderr. The
rate printed is rounded to a few digits in SI or IEC units; bytes / seconds is exact, so
that is what is kept.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_SUMMARY = re.compile(
    r"^(?P<bytes>\d+) bytes?(?: \([^)]*\))? copied, (?P<seconds>\d+(?:[.,]\d+)?(?:e[-+]?\d+)?) s"
)


class DdParseError(ValueError):
    """dd printed no summary line; the message quotes its last line."""


@dataclass(frozen=True)
class DdCopy:
    bytes: int
    seconds: float

    @property
    def bytes_per_second(self) -> float:
        return self.bytes / max(self.seconds, 1e-9)


def parse_dd_summary(stderr: str) -> DdCopy:
    """The last summary line of dd's stderr."""
    for line in reversed(stderr.strip().splitlines()):
        match = _SUMMARY.match(line.strip())
        if match:
            return DdCopy(int(match["bytes"]), float(match["seconds"].replace(",", ".")))
    last = stderr.strip().splitlines()[-1] if stderr.strip() else "nothing"
    raise DdParseError(f"dd printed no 'bytes ... copied, ... s' summary (last line: {last!r})")
