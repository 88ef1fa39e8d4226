# SPDX-License-Identifier: MIT
"""The logic behind `hwcrypto compare`; pure: Results in, comparisons out.

Two modes:

* **Regression** (`compare BASELINE CURRENT`): measurements are matched on (source,
  algorithm, key_bits, block_size, op, driver).  A match fails when the current median is
  more than `max_drop` below the baseline median *and* the drop is beyond the noise (the
  two medians' confidence intervals do not overlap).  Without samples (bare numbers from
  tool output) the point values decide.  Two runs of an unchanged system therefore do not
  fail, while a clear 15 % slowdown with tight samples does.  Each match also carries
  `detectable_drop`: the smallest drop this pair of sample sets would have been flagged
  for (model/sensitivity.py), so a pass says how much it could have seen.
* **Software vs hardware** (`compare --sw SW --hw HW`): measurements are matched on
  (source, algorithm, key_bits, block_size, op), the driver being what differs.  A match
  fails when it lies in the block-size range and HW/SW is *clearly* below `min_ratio`
  (the ratio's conservative upper bound is below it).  The crossover per algorithm is
  reported on median ratios over every measured size.

In both modes `Comparison.change` is current / baseline - 1 (so in sw/hw mode, where the
baseline is software and current is hardware, the HW/SW ratio is `change + 1`): one
definition for one JSON key.  Repeated measurements of the same key in one file are pooled
(their samples, or their values, become one sample set; verdict/pooling.py, shared with
the profile rules so both pick the same driver on the same data).

In both modes a match whose two sides were decided by their storage (both at least 95 %
busy and equally fast; verdict/storage_bound.py) is not judged: it carries
`storage_bound` (the reason), never fails, and stays out of the crossover, since a disk
that set both speeds says nothing about the cipher -- whatever files the two runs came
from.

The command's lines are worded in verdict/compare_text.py; reading a pytest-benchmark
file as Results is report/benchmark_import.py's business.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from pytest_hwcrypto.model.results import Measurement, Results
from pytest_hwcrypto.model.sensitivity import detectable_drop
from pytest_hwcrypto.model.stats import RatioInterval, SampleStats, ratio_interval
from pytest_hwcrypto.verdict.blocksizes import ALL_BLOCK_SIZES, BlockSizeRange, parse_block_sizes
from pytest_hwcrypto.verdict.crossover import crossover
from pytest_hwcrypto.verdict.pooling import (
    DriverStats,
    MatchKey,
    PathKey,
    fastest_driver,
    group_by,
    match_key,
    path_key,
    pooled_by_key,
)
from pytest_hwcrypto.verdict.relative import (
    RELATIVE_TO_KEY,
    relative_measurements,
    resolve_references,
)
from pytest_hwcrypto.verdict.storage_bound import storage_bound_pair
from pytest_hwcrypto.vocabulary import DEFAULT_MAX_DROP, DEFAULT_MIN_RATIO


@dataclass(frozen=True)
class Comparison:
    """One matched measurement: baseline and current medians in bytes/s."""

    source: str
    algorithm: str
    key_bits: int | None
    block_size: int | None
    op: str
    driver: str | None
    baseline: float
    current: float
    change: float
    failed: bool
    ratio_low: float
    ratio_high: float
    baseline_driver: str | None = None
    in_range: bool = True
    # regression mode: the smallest drop this pair of sample sets could have shown
    # (model/sensitivity.py); None in sw/hw mode
    detectable_drop: float | None = None
    # regression mode relative to a reference (verdict/relative.py): its driver, and then
    # baseline and current are throughput as a multiple of that driver's, not bytes/s
    relative_to: str | None = None
    # both sides' storage set the speed (verdict/storage_bound.py): why; not judged then
    storage_bound: str | None = None

    @property
    def ratio(self) -> float:
        return self.change + 1.0

    def to_json(self) -> dict[str, Any]:
        """Exactly the keys `compare --json` documents."""
        data: dict[str, Any] = {
            "algorithm": self.algorithm,
            "key_bits": self.key_bits,
            "block_size": self.block_size,
            "op": self.op,
            "driver": self.driver,
            "baseline": self.baseline,
            "current": self.current,
            "change": _json_number(self.change),
            "failed": self.failed,
        }
        if self.detectable_drop is not None:
            data["detectable_drop"] = self.detectable_drop
        if self.relative_to is not None:
            data["relative_to"] = self.relative_to
        if self.storage_bound is not None:
            data["storage_bound"] = self.storage_bound
        return data


@dataclass(frozen=True)
class HwSwComparison:
    """The outcome of sw/hw mode: per-size comparisons and the crossover per algorithm."""

    comparisons: list[Comparison]
    crossover: dict[str, int | None]
    min_ratio: float
    block_sizes: BlockSizeRange = field(default=ALL_BLOCK_SIZES)

    @property
    def storage_bound(self) -> list[str]:
        """Algorithms left without a crossover because only storage-bound matches had one."""
        bound = {c.algorithm for c in self.comparisons if c.storage_bound is not None}
        judged = {c.algorithm for c in self.comparisons if c.storage_bound is None}
        return sorted(bound - judged)


# ---------------------------------------------------------------------------------------
# decisions


def regressed(baseline: SampleStats, current: SampleStats, max_drop: float) -> bool:
    """A drop larger than `max_drop` that is also beyond the noise.

    Beyond the noise means the intervals do not overlap (current's upper bound is below
    baseline's lower bound), which is the ratio interval's upper bound being below 1.
    Point values have zero-width intervals, so for them only the size of the drop counts.
    """
    interval = ratio_interval(current, baseline)
    return interval.ratio < 1.0 - max_drop and interval.clearly_below(1.0)


def parse_fraction(text: str) -> float:
    """'10%' -> 0.10, '0.1' -> 0.10; ValueError for anything else (a bare '10' is ambiguous)."""
    stripped = text.strip()
    try:
        if stripped.endswith("%"):
            value = float(stripped[:-1]) / 100.0
        else:
            value = float(stripped)
            if value > 1.0:
                raise ValueError
    except ValueError:
        raise ValueError(
            f"bad fraction {text!r}: write a percentage like '10%' or a fraction like 0.1"
        ) from None
    if not 0.0 <= value <= 1.0:
        raise ValueError(f"bad fraction {text!r}: must be between 0% and 100%")
    return value


# ---------------------------------------------------------------------------------------
# regression mode


def compare(
    baseline: Results,
    current: Results,
    max_drop: float = DEFAULT_MAX_DROP,
    algorithm: str | None = None,
    relative_to: str | None = None,
) -> list[Comparison]:
    """Match baseline and current measurements and judge each match (regression mode)."""
    return compare_measurements(
        _only_algorithm(baseline.measurements, algorithm),
        _only_algorithm(current.measurements, algorithm),
        max_drop,
        relative_to,
    )


def compare_measurements(
    baseline: Sequence[Measurement],
    current: Sequence[Measurement],
    max_drop: float = DEFAULT_MAX_DROP,
    relative_to: str | None = None,
) -> list[Comparison]:
    """Regression comparisons in the current measurements' order.

    With `relative_to` (a driver, or "software"), each side is first made relative to that
    reference measured in its own run (verdict/relative.py), and the ratios are compared.
    """
    if relative_to is not None:
        references = resolve_references(baseline, relative_to)
        baseline = relative_measurements(baseline, references)
        current = relative_measurements(current, references)
    reference_of = {match_key(m): m.extra.get(RELATIVE_TO_KEY) for m in current}
    baseline_stats = pooled_by_key(baseline, match_key)
    current_stats = pooled_by_key(current, match_key)
    baseline_members = group_by(baseline, match_key)
    current_members = group_by(current, match_key)
    comparisons = []
    for key, current_summary in current_stats.items():
        baseline_summary = baseline_stats.get(key)
        if baseline_summary is None:
            continue
        path, driver = key[:6], key[6]
        interval = ratio_interval(current_summary, baseline_summary)
        bound = storage_bound_pair(baseline_members[key], current_members[key])
        comparisons.append(
            _comparison(
                path,
                driver=driver,
                baseline=baseline_summary,
                current=current_summary,
                interval=interval,
                failed=bound is None and regressed(baseline_summary, current_summary, max_drop),
                detectable=detectable_drop(baseline_summary, current_summary, max_drop),
                relative_to=reference_of.get(key),
                storage_bound=None if bound is None else bound.describe(),
            )
        )
    return comparisons


def unmatched(
    baseline: Results, current: Results, algorithm: str | None = None
) -> tuple[list[MatchKey], list[MatchKey]]:
    """Keys only in the baseline (gone: a driver vanished?) and only in current (new)."""
    baseline_keys = pooled_by_key(_only_algorithm(baseline.measurements, algorithm), match_key)
    current_keys = pooled_by_key(_only_algorithm(current.measurements, algorithm), match_key)
    gone = [key for key in baseline_keys if key not in current_keys]
    new = [key for key in current_keys if key not in baseline_keys]
    return gone, new


# ---------------------------------------------------------------------------------------
# software vs hardware mode


def compare_hw_sw(
    sw: Results,
    hw: Results,
    min_ratio: float = DEFAULT_MIN_RATIO,
    block_sizes: str | BlockSizeRange | None = None,
    algorithm: str | None = None,
) -> HwSwComparison:
    """HW/SW ratio per matched (source, algorithm, key_bits, block_size, op) and crossovers.

    When a file holds several drivers for one key, the fastest (by median) represents it.
    """
    size_range = (
        block_sizes if isinstance(block_sizes, BlockSizeRange) else parse_block_sizes(block_sizes)
    )
    sw_best = _fastest_driver_by_path(_only_algorithm(sw.measurements, algorithm))
    hw_best = _fastest_driver_by_path(_only_algorithm(hw.measurements, algorithm))
    comparisons = []
    for key, hw_fastest in hw_best.items():
        sw_fastest = sw_best.get(key)
        if sw_fastest is None:
            continue
        interval = ratio_interval(hw_fastest.stats, sw_fastest.stats)
        in_range = size_range.contains(key[3])
        bound = storage_bound_pair(sw_fastest.members, hw_fastest.members)
        comparisons.append(
            _comparison(
                key,
                driver=hw_fastest.driver,
                baseline=sw_fastest.stats,
                current=hw_fastest.stats,
                interval=interval,
                failed=bound is None and in_range and interval.clearly_below(min_ratio),
                baseline_driver=sw_fastest.driver,
                in_range=in_range,
                storage_bound=None if bound is None else bound.describe(),
            )
        )
    return HwSwComparison(
        comparisons=comparisons,
        crossover=crossover_by_algorithm(comparisons, min_ratio),
        min_ratio=min_ratio,
        block_sizes=size_range,
    )


def crossover_by_algorithm(
    comparisons: Iterable[Comparison], min_ratio: float
) -> dict[str, int | None]:
    """Crossover of each algorithm that has block sizes.

    An algorithm measured under several key sizes, ops or sources has one series each; its
    crossover is the largest of theirs (from there on HW holds in every series), or None
    when any series never gets there.  Storage-bound matches say nothing about the cipher
    and are left out (an algorithm with only those has no crossover entry).
    """
    series: dict[tuple[str, str, int | None, str], dict[int, float]] = {}
    for comparison in comparisons:
        if comparison.block_size is None or comparison.storage_bound is not None:
            continue
        group = (comparison.algorithm, comparison.source, comparison.key_bits, comparison.op)
        series.setdefault(group, {})[comparison.block_size] = comparison.ratio
    result: dict[str, int | None] = {}
    for (algorithm, *_), ratios in series.items():
        size = crossover(ratios, min_ratio)
        if algorithm not in result:
            result[algorithm] = size
            continue
        previous = result[algorithm]
        result[algorithm] = None if previous is None or size is None else max(previous, size)
    return result


# ---------------------------------------------------------------------------------------
# shared output


def any_failed(comparisons: Iterable[Comparison]) -> bool:
    """The exit-code decision: 1 when this is True."""
    return any(comparison.failed for comparison in comparisons)


def comparisons_to_json(
    comparisons: Iterable[Comparison], crossover: Mapping[str, int | None] | None = None
) -> dict[str, Any]:
    """{"comparisons": [...], "crossover": {algorithm: block_size}}, the documented shape."""
    return {
        "comparisons": [comparison.to_json() for comparison in comparisons],
        "crossover": dict(crossover or {}),
    }


def _json_number(value: float) -> float | None:
    return value if math.isfinite(value) else None


# ---------------------------------------------------------------------------------------
# matching helpers


def _comparison(
    key: PathKey,
    driver: str | None,
    baseline: SampleStats,
    current: SampleStats,
    interval: RatioInterval,
    failed: bool,
    baseline_driver: str | None = None,
    in_range: bool = True,
    detectable: float | None = None,
    relative_to: str | None = None,
    storage_bound: str | None = None,
) -> Comparison:
    source, algorithm, key_bits, block_size, op, _level = key
    return Comparison(
        source=source,
        algorithm=algorithm,
        key_bits=key_bits,
        block_size=block_size,
        op=op,
        driver=driver,
        baseline=baseline.median,
        current=current.median,
        change=interval.ratio - 1.0,
        failed=failed,
        ratio_low=interval.low,
        ratio_high=interval.high,
        baseline_driver=baseline_driver,
        in_range=in_range,
        detectable_drop=detectable,
        relative_to=relative_to,
        storage_bound=storage_bound,
    )


def _only_algorithm(
    measurements: Sequence[Measurement], algorithm: str | None
) -> list[Measurement]:
    return [m for m in measurements if algorithm is None or m.algorithm == algorithm]


def _fastest_driver_by_path(measurements: Sequence[Measurement]) -> dict[PathKey, DriverStats]:
    """The driver that stands for each path in one file: the fastest by median."""
    fastest: dict[PathKey, DriverStats] = {}
    for path, members in group_by(measurements, path_key).items():
        best = fastest_driver(members)
        if best is not None:
            fastest[path] = best
    return fastest


__all__ = [
    "Comparison",
    "HwSwComparison",
    "MatchKey",
    "PathKey",
    "any_failed",
    "compare",
    "compare_hw_sw",
    "compare_measurements",
    "comparisons_to_json",
    "crossover_by_algorithm",
    "match_key",
    "parse_fraction",
    "path_key",
    "regressed",
    "unmatched",
]
