# SPDX-License-Identifier: MIT
"""Judging a hardware RNG source: rngtest's FIPS 140-2 counts, stuck or repeating output,
whether the kernel credits it, whether the profile's expected source is there. Pure.

Every message names the source and the check, so a failure reads on its own; every
judgement carries the kind of finding it is when it fails, so no caller reads the wording.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from fnmatch import fnmatchcase
from functools import reduce
from operator import and_, or_

from pytest_hwcrypto.parsers.rngtest import RngtestSummary
from pytest_hwcrypto.vocabulary import FindingKind

# Good random input fails rngtest's FIPS 140-2 block tests now and then (3 of 2000
# /dev/urandom blocks in tests/data/rngtest/urandom-2000-blocks.txt): a count of failures
# is judged against that rate, never against zero. The rate taken is above what the
# tests' bounds give for ideal input, so a fair source stays well inside.
FIPS_FALSE_ALARM_RATE = 0.002
# How unlikely the failure count must be for a fair source before it is a failure.
FIPS_SIGNIFICANCE = 1e-6
# Bytes compared when looking for output seen before: a 32-byte repeat in random output
# has probability about n^2 / 2^257.
REPEAT_WINDOW = 32
WORD_BYTES = 4  # stuck bits are looked for in each bit position of a 32-bit word

UNHEALTHY = FindingKind.HWRNG_UNHEALTHY
NOT_CREDITED = FindingKind.HWRNG_NOT_CREDITED
MISSING = FindingKind.HWRNG_MISSING


@dataclass(frozen=True)
class Judgement:
    passed: bool
    message: str
    kind: FindingKind  # the finding this check makes when it fails


def binomial_upper_tail(failures: int, blocks: int, rate: float) -> float:
    """P(X >= failures) for X ~ Binomial(blocks, rate)."""
    if failures <= 0:
        return 1.0
    if failures > blocks:
        return 0.0
    total = 0.0
    log_rate, log_rest = math.log(rate), math.log1p(-rate)
    for k in range(failures, blocks + 1):
        log_term = (
            math.lgamma(blocks + 1)
            - math.lgamma(k + 1)
            - math.lgamma(blocks - k + 1)
            + k * log_rate
            + (blocks - k) * log_rest
        )
        term = math.exp(log_term)
        total += term
        if term < total * 1e-12:
            break
    return min(total, 1.0)


def fips_judgement(source: str, summary: RngtestSummary) -> Judgement:
    blocks, failures = summary.blocks, summary.failures
    counts = ", ".join(f"{name} {count}" for name, count in summary.failed_by_test.items())
    said = f"{source}: rngtest FIPS 140-2: {failures} of {blocks} blocks failed ({counts})"
    if blocks == 0:
        return Judgement(False, f"{source}: rngtest FIPS 140-2: no block tested", UNHEALTHY)
    tail = binomial_upper_tail(failures, blocks, FIPS_FALSE_ALARM_RATE)
    if tail < FIPS_SIGNIFICANCE:
        failing = ", ".join(summary.failing_tests())
        return Judgement(
            False,
            f"{said}; failing tests: {failing}; a fair source fails this many with "
            f"probability {tail:.1e}",
            UNHEALTHY,
        )
    return Judgement(True, said, UNHEALTHY)


def repeat_period(data: bytes, window: int = REPEAT_WINDOW) -> tuple[int, int] | None:
    """(offset, period) of output seen before, or None.

    Windows taken at the start, a quarter and half way in are searched for further on; a
    source that starts repeating before one of them is caught whatever its period."""
    for start in sorted({0, len(data) // 4, len(data) // 2}):
        probe = data[start : start + window]
        if len(probe) < window:
            continue
        again = data.find(probe, start + 1)
        if again >= 0:
            return start, again - start
    return None


def stuck_bits(data: bytes, word: int = WORD_BYTES) -> list[tuple[int, int]]:
    """(bit position in a little-endian word, stuck value) of bits that never change."""
    usable = len(data) - len(data) % word
    if usable < word * 64:
        return []  # too little to tell: 64 words leave a fair bit unchanged 1 in 2^63
    stuck = []
    for lane in range(word):
        values = set(data[lane:usable:word])
        ones = reduce(and_, values)  # bits set in every byte of this lane
        zeros = ~reduce(or_, values) & 0xFF  # bits clear in every byte of this lane
        for bit in range(8):
            for mask, value in ((ones, 1), (zeros, 0)):
                if mask >> bit & 1:
                    stuck.append((lane * 8 + bit, value))
    return sorted(stuck)


def output_judgement(source: str, data: bytes) -> Judgement:
    """Stuck bits and repeated output in the bytes read from `source`."""
    problems = []
    bits = stuck_bits(data)
    if bits:
        listed = ", ".join(f"bit {position}={value}" for position, value in bits[:8])
        more = f" and {len(bits) - 8} more" if len(bits) > 8 else ""
        problems.append(f"stuck bits in every 32-bit word: {listed}{more}")
    repeat = repeat_period(data)
    if repeat is not None:
        offset, period = repeat
        problems.append(
            f"output repeats: the {REPEAT_WINDOW} bytes at offset {offset} come again "
            f"{period} bytes later"
        )
    if problems:
        said = f"{source}: " + "; ".join(problems) + f" ({len(data)} bytes read)"
        return Judgement(False, said, UNHEALTHY)
    return Judgement(True, f"{source}: no stuck bit, no repeat in {len(data)} bytes", UNHEALTHY)


def credit_judgement(source: str, quality: int | None) -> Judgement:
    """The kernel credits `quality`/1024 bits of entropy per bit its fill thread reads from
    the current source (drivers/char/hw_random/core.c); 0 mixes the bytes in uncredited."""
    if quality is None:
        return Judgement(
            True, f"{source}: no rng_quality (kernel before 5.18), credit unknown", NOT_CREDITED
        )
    if quality == 0:
        return Judgement(
            False,
            f"{source}: rng_quality 0: the kernel mixes its output into the pool but "
            "credits no entropy for it",
            NOT_CREDITED,
        )
    return Judgement(
        True, f"{source}: credited {quality}/1024 bits of entropy per bit", NOT_CREDITED
    )


def expected_source_judgement(pattern: str, where: str, available: Sequence[str]) -> Judgement:
    matching = [name for name in available if fnmatchcase(name, pattern)]
    found = ", ".join(available) if available else "none"
    if matching:
        return Judgement(True, f"hwrng {pattern}: {', '.join(matching)} registered", MISSING)
    return Judgement(
        False, f"{where}: expected a hw_random source {pattern}, found: {found}", MISSING
    )
