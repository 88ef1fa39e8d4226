# SPDX-License-Identifier: MIT
"""Findings about requests in flight (pure): does a hardware driver need several at once?

An offload engine is queued: a request waits for the device, and one submitter leaves it
idle for that wait. Measured one request at a time it can lose to the CPU's own driver and
still win as soon as a few requests are in flight -- the way dm-crypt, with its per-CPU
workers, really drives it. So "hardware loses to software" at N = 1 alone can be the wrong
verdict; `needs-concurrency` says so, naming the smallest N at which it wins.

Both sides are compared at the same N (the software driver gets as many submitters), per
block size, on the same pairs the other findings use (series.hw_sw_pairs: hardware against
generic, offload against cpu-accel). "Loses" is clearly below min_ratio (the interval's
upper end), "wins" clearly at or above it (the interval's lower end), so noise alone never
makes the finding.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Optional

from pytest_hwcrypto.model.results import Finding, Measurement
from pytest_hwcrypto.units import format_ratio
from pytest_hwcrypto.verdict.rules import wording
from pytest_hwcrypto.verdict.rules.model import Inventory, PairPoint
from pytest_hwcrypto.verdict.rules.series import hw_sw_pairs
from pytest_hwcrypto.vocabulary import DEFAULT_MIN_RATIO, FindingKind

# (algorithm, source, key_bits, op, hw words, sw words): one pair's series at every level
_PairKey = tuple[str, str, Optional[int], str, str, str]


@dataclass(frozen=True)
class NeedsConcurrency:
    """At one block size: the ratio one at a time, and the first level that wins."""

    block_size: int | None
    alone: PairPoint
    level: int
    winning: PairPoint


def needs_concurrency_findings(
    measurements: Sequence[Measurement], inventory: Inventory, min_ratio: float = DEFAULT_MIN_RATIO
) -> list[Finding]:
    """One finding per hardware/software pair that loses at N = 1 and wins at some N > 1
    at one or more block sizes, naming the smallest such N."""
    by_pair: dict[_PairKey, dict[int, list[PairPoint]]] = {}
    for algorithm, group, hw, sw, points in hw_sw_pairs(measurements, inventory):
        source, key_bits, op, level = group
        by_pair.setdefault((algorithm, source, key_bits, op, hw, sw), {})[level] = points
    findings = []
    for key, levels in by_pair.items():
        cases = _cases(levels, min_ratio)
        if cases:
            findings.append(_finding(key, cases, min_ratio))
    return findings


def _cases(levels: dict[int, list[PairPoint]], min_ratio: float) -> list[NeedsConcurrency]:
    alone = {point.block_size: point for point in levels.get(1, [])}
    cases = []
    for size, point in alone.items():
        if not point.interval.clearly_below(min_ratio):
            continue
        for level in sorted(n for n in levels if n > 1):
            winning = next((p for p in levels[level] if p.block_size == size), None)
            if winning is not None and winning.interval.low >= min_ratio:
                cases.append(NeedsConcurrency(size, point, level, winning))
                break
    return cases


def _finding(key: _PairKey, cases: Sequence[NeedsConcurrency], min_ratio: float) -> Finding:
    algorithm, source, key_bits, op, hw, sw = key
    smallest = min(case.level for case in cases)
    context = wording.context(algorithm, (source, key_bits, op, 1), True)
    parts = [
        f"{wording.size_words(case.block_size)}: {format_ratio(case.alone.interval.ratio)}x "
        f"at N=1, {format_ratio(case.winning.interval.ratio)}x at N={case.level}"
        for case in cases
    ]
    detail = (
        f"{context}: {hw} loses to {sw} one request at a time and wins with {smallest} in "
        f"flight ({'; '.join(parts)}): judge it at N >= {smallest}, as dm-crypt drives it"
    )
    extra: dict[str, Any] = {
        "source": source,
        "key_bits": key_bits,
        "op": op,
        "driver": cases[0].alone.first.driver,
        "other_driver": cases[0].alone.second.driver,
        "concurrency": smallest,
        "min_ratio": min_ratio,
        "points": [
            {
                "block_size": case.block_size,
                "ratio_at_1": case.alone.interval.ratio,
                "concurrency": case.level,
                "ratio": case.winning.interval.ratio,
            }
            for case in cases
        ],
    }
    return Finding(FindingKind.NEEDS_CONCURRENCY, algorithm, detail, extra)
