# SPDX-License-Identifier: MIT
"""Is a random generator's output stuck or repeating? (pure)

Not a statistical test: rngtest and SP 800-90B tools judge the quality of a raw source. A
DRBG's output passes any of them as long as its code runs; what breaks on real boards is
plainer -- an engine that returns the same word for every read, a buffer never refilled (the
same bytes every N), a read that leaves the buffer untouched (all zeros), two sessions
seeded alike handing out the same stream. Each of these is caught here, with odds of a
false alarm on real random output far below anything a run will meet:

* one byte value over the whole output: 2^-8(n-1) for n bytes;
* a period: the output equal to itself shifted by p bytes, for any p up to half of it,
  checked on the first 32 bytes of every p-block (a false match needs 256 bits to agree);
* a repeated 16-byte block anywhere: about n^2 / 2^129.
"""

from __future__ import annotations

from collections.abc import Sequence

# A block this long repeating by chance is out of reach (2^-128 per pair of positions).
REPEAT_BLOCK = 16
# How much of each period is compared before calling it a period.
PERIOD_PROBE = 32


def output_problem(data: bytes) -> str | None:
    """What is wrong with one stream of output, or None; needs 64 bytes or more to judge."""
    if len(data) < 4 * REPEAT_BLOCK:
        return None
    if data.count(data[0]) == len(data):
        return f"every one of {len(data)} bytes is {data[0]:#04x}: the output is stuck"
    period = _period(data)
    if period is not None:
        return (
            f"the output repeats every {period} bytes "
            f"(bytes 0-{min(period, PERIOD_PROBE) - 1} come back at {period})"
        )
    first, again = _repeated_block(data)
    if again is not None:
        return (
            f"the {REPEAT_BLOCK} bytes at offset {first} come back at offset {again}: "
            "the generator handed out the same bytes twice"
        )
    return None


def streams_problem(streams: Sequence[bytes]) -> str | None:
    """Two sessions that gave the same bytes (seeded alike, or a shared stuck buffer)."""
    seen: dict[bytes, int] = {}
    for index, stream in enumerate(streams):
        head = stream[:REPEAT_BLOCK]
        if len(head) < REPEAT_BLOCK:
            continue
        if head in seen:
            return (
                f"sessions {seen[head]} and {index} began with the same {REPEAT_BLOCK} "
                "bytes: their generators are in the same state"
            )
        seen[head] = index
    return None


def _period(data: bytes) -> int | None:
    for period in range(1, len(data) // 2 + 1):
        probe = min(period, PERIOD_PROBE)
        if all(
            data[start : start + probe] == data[0:probe]
            for start in range(period, len(data) - probe + 1, period)
        ):
            return period
    return None


def _repeated_block(data: bytes) -> tuple[int, int | None]:
    seen: dict[bytes, int] = {}
    for offset in range(0, len(data) - REPEAT_BLOCK + 1, REPEAT_BLOCK):
        block = data[offset : offset + REPEAT_BLOCK]
        if block in seen:
            return seen[block], offset
        seen[block] = offset
    return 0, None


__all__ = ["PERIOD_PROBE", "REPEAT_BLOCK", "output_problem", "streams_problem"]
