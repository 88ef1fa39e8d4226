# SPDX-License-Identifier: MIT
"""rng-tools' rngtest: its summary (stderr) as counts per FIPS 140-2 test.

rngtest reads 20000-bit blocks from stdin and prints, at the end, lines such as
`rngtest: FIPS 140-2 successes: 200`, one count of failed blocks per test
(`rngtest: FIPS 140-2(2001-10-10) Monobit: 0`, Poker, Runs, Long run, Continuous run) and
the speeds. Its exit status is 1 as soon as one block failed, which random input does
about once in a thousand blocks, so the counts are what a verdict decides on.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

# The FIPS 140-2 tests rngtest runs, as it names them.
FIPS_TESTS = ("Monobit", "Poker", "Runs", "Long run", "Continuous run")
BLOCK_BYTES = 2500  # 20000 bits
# rngtest reads 32 bits before the first block to seed its continuous-run test.
PRIMING_BYTES = 4

_COUNT = re.compile(r"^rngtest:\s+FIPS 140-2 (successes|failures):\s+(\d+)\s*$")
_PER_TEST = re.compile(r"^rngtest:\s+FIPS 140-2\([^)]*\)\s+(.+?):\s+(\d+)\s*$")
_BITS = re.compile(r"^rngtest:\s+bits received from input:\s+(\d+)\s*$")


class RngtestParseError(ValueError):
    """The text holds no rngtest summary."""


@dataclass(frozen=True)
class RngtestSummary:
    successes: int
    failures: int
    bits_received: int | None
    failed_by_test: dict[str, int] = field(default_factory=dict)  # test -> failed blocks

    @property
    def blocks(self) -> int:
        return self.successes + self.failures

    def failing_tests(self) -> list[str]:
        return [name for name, count in self.failed_by_test.items() if count]


def parse_rngtest(text: str) -> RngtestSummary:
    counts: dict[str, int] = {}
    per_test: dict[str, int] = {}
    bits: int | None = None
    for line in text.splitlines():
        line = line.strip()
        if match := _COUNT.match(line):
            counts[match.group(1)] = int(match.group(2))
        elif match := _PER_TEST.match(line):
            per_test[match.group(1)] = int(match.group(2))
        elif match := _BITS.match(line):
            bits = int(match.group(1))
    if "successes" not in counts or "failures" not in counts:
        raise RngtestParseError(
            "no rngtest summary (the 'FIPS 140-2 successes' and 'failures' lines) in the output"
        )
    return RngtestSummary(counts["successes"], counts["failures"], bits, per_test)
