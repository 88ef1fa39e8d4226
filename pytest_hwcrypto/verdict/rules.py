"""Throughput rules of a board profile, and findings that need no rule (pure).

Rule types (the `type` key of a `[[rule]]` table):

* ``hw-beats-sw``: algorithm, hw, sw (each a driver name or a class: generic, cpu-accel,
  offload), min_ratio (default 1.0), block_sizes, source.  When a side is a class, the
  fastest (median) driver of that class at each block size stands for it, and is named.
* ``floor``: algorithm, driver *or* class, min_mib_s, block_sizes, source.
* ``winner-fastest``: algorithm, tolerance (default 0.05), block_sizes, source.  The
  winner (highest priority in /proc/crypto, what dm-crypt and AF_ALG get by default) must
  be as fast as the fastest measured driver, within noise and the tolerance.
* ``no-regression``: max_drop (default 10 %; 0.1 or "10%"), optional algorithm, driver,
  block_sizes, source; checked against a baseline Results.

All rules also take optional ``name`` (for the verdict), ``key_bits`` and ``op``.
Measurements are grouped by (source, key_bits, op), so a rule never compares a 128-bit
decrypt with a 256-bit encrypt.

Decisions use sample statistics so that an unchanged system does not flap (see
measure/stats.py): a rule fails only when the data are *clearly* on the wrong side --
hw-beats-sw when the HW/SW ratio's upper bound is below min_ratio, floor when the upper
bound of the throughput is below the floor, winner-fastest when winner/fastest's upper bound
is below 1 - tolerance, no-regression when the drop exceeds max_drop and is beyond the
noise.  Bare numbers (tool output, no samples) are decided on their point values.

A rule without data to judge fails: the profile says this must hold, and "nothing was
measured" (a driver missing, AF_ALG masking offload engines) is exactly what CI must see.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, Optional, TypeVar, Union

from pytest_hwcrypto.measure.stats import RatioInterval, SampleStats, ratio_interval
from pytest_hwcrypto.report.results import Finding, Measurement, Results, Verdict
from pytest_hwcrypto.verdict.blocksizes import ALL_BLOCK_SIZES, BlockSizeRange, parse_block_sizes
from pytest_hwcrypto.verdict.compare import Comparison, compare_measurements, parse_fraction
from pytest_hwcrypto.verdict.compare_text import (
    describe_comparison,
    format_mib_s,
    format_min_ratio,
    format_ratio,
)
from pytest_hwcrypto.verdict.crossover import crossover
from pytest_hwcrypto.verdict.pooling import pooled_stats
from pytest_hwcrypto.vocabulary import DEFAULT_MAX_DROP, DEFAULT_MIN_RATIO, MIB

GENERIC = "generic"
CPU_ACCEL = "cpu-accel"
OFFLOAD = "offload"
DRIVER_CLASSES = (GENERIC, CPU_ACCEL, OFFLOAD)
HARDWARE_CLASSES = (CPU_ACCEL, OFFLOAD)

# Differences smaller than this are not worth a winner-not-fastest report even when
# statistically clear: priorities are set per architecture, not per board.
DEFAULT_WINNER_TOLERANCE = 0.05

Inventory = Sequence[Mapping[str, Any]]


class RuleError(ValueError):
    """A rule in a profile is malformed; the message names where and the key."""


@dataclass(frozen=True)
class RuleOutcome:
    verdict: Verdict
    findings: list[Finding] = field(default_factory=list)


# ---------------------------------------------------------------------------------------
# scope: which measurements a rule looks at


@dataclass(frozen=True)
class Scope:
    """The measurements a rule is about; None means "any"."""

    algorithm: str | None
    block_sizes: BlockSizeRange = ALL_BLOCK_SIZES
    source: str | None = None
    key_bits: int | None = None
    op: str | None = None

    def admits_path(self, measurement: Measurement) -> bool:
        """Everything but the block size (crossovers look beyond the range)."""
        return (
            (self.algorithm is None or measurement.algorithm == self.algorithm)
            and (self.source is None or measurement.source == self.source)
            and (self.key_bits is None or measurement.key_bits == self.key_bits)
            and (self.op is None or measurement.op == self.op)
        )

    def admits(self, measurement: Measurement) -> bool:
        return self.admits_path(measurement) and self.block_sizes.contains(measurement.block_size)


# (source, key_bits, op): the measurements one comparison series is made of
GroupKey = tuple[str, Optional[int], str]


@dataclass(frozen=True)
class Candidate:
    """The driver standing for one side at one block size, with its statistics."""

    driver: str
    driver_class: str | None
    stats: SampleStats


@dataclass(frozen=True)
class PairPoint:
    """One side against the other at one block size."""

    block_size: int | None
    first: Candidate
    second: Candidate
    interval: RatioInterval


# ---------------------------------------------------------------------------------------
# rule types


@dataclass(frozen=True)
class HwBeatsSwRule:
    TYPE: ClassVar[str] = "hw-beats-sw"

    scope: Scope
    hw: str
    sw: str
    min_ratio: float = DEFAULT_MIN_RATIO
    name: str | None = None

    @property
    def label(self) -> str:
        return self.name or f"{self.TYPE} {self.scope.algorithm} {self.hw} vs {self.sw}"

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], where: str) -> HwBeatsSwRule:
        reader = _RuleReader(data, where, cls.TYPE)
        rule = cls(
            scope=reader.scope(algorithm_required=True),
            hw=reader.string("hw"),
            sw=reader.string("sw"),
            min_ratio=reader.positive_number("min_ratio", DEFAULT_MIN_RATIO),
            name=reader.optional_string("name"),
        )
        reader.finish()
        if rule.hw == rule.sw:
            raise RuleError(f"{where}: 'hw' and 'sw' are both {rule.hw!r}")
        return rule

    def evaluate(
        self,
        measurements: Sequence[Measurement],
        inventory: Inventory,
        baseline: Results | None = None,
    ) -> RuleOutcome:
        classes = driver_classes(inventory)
        missing = _missing_side(measurements, self.scope, classes, (self.hw, self.sw))
        if missing is not None:
            return _no_data(
                self.label,
                f"{self.scope.algorithm}: no {missing} measured{_scope_words(self.scope)}",
            )
        series = _pair_series(measurements, self.scope, classes, self.hw, self.sw)
        return _judge_hw_vs_sw(self, series)


@dataclass(frozen=True)
class FloorRule:
    TYPE: ClassVar[str] = "floor"

    scope: Scope
    target: str  # a driver name or a class
    min_mib_s: float
    name: str | None = None

    @property
    def label(self) -> str:
        return self.name or f"{self.TYPE} {self.scope.algorithm} {self.target}"

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], where: str) -> FloorRule:
        reader = _RuleReader(data, where, cls.TYPE)
        driver = reader.optional_string("driver")
        driver_class = reader.optional_string("class")
        if (driver is None) == (driver_class is None):
            raise RuleError(f"{where}: give exactly one of 'driver' and 'class'")
        if driver_class is not None and driver_class not in DRIVER_CLASSES:
            raise RuleError(
                f"{where}: key 'class' must be one of {', '.join(DRIVER_CLASSES)}, "
                f"got {driver_class!r}"
            )
        rule = cls(
            scope=reader.scope(algorithm_required=True),
            target=driver or driver_class or "",
            min_mib_s=reader.positive_number("min_mib_s"),
            name=reader.optional_string("name"),
        )
        reader.finish()
        return rule

    def evaluate(
        self,
        measurements: Sequence[Measurement],
        inventory: Inventory,
        baseline: Results | None = None,
    ) -> RuleOutcome:
        points = _floor_points(measurements, self.scope, driver_classes(inventory), self.target)
        if not points:
            return _no_data(
                self.label,
                f"{self.scope.algorithm}: no {self.target} measured{_range_words(self.scope)}"
                + _scope_words(self.scope),
            )
        return _judge_floor(self, points)


@dataclass(frozen=True)
class WinnerFastestRule:
    TYPE: ClassVar[str] = "winner-fastest"

    scope: Scope
    tolerance: float = DEFAULT_WINNER_TOLERANCE
    name: str | None = None

    @property
    def label(self) -> str:
        return self.name or f"{self.TYPE} {self.scope.algorithm}"

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], where: str) -> WinnerFastestRule:
        reader = _RuleReader(data, where, cls.TYPE)
        rule = cls(
            scope=reader.scope(algorithm_required=True),
            tolerance=reader.fraction("tolerance", DEFAULT_WINNER_TOLERANCE),
            name=reader.optional_string("name"),
        )
        reader.finish()
        return rule

    def evaluate(
        self,
        measurements: Sequence[Measurement],
        inventory: Inventory,
        baseline: Results | None = None,
    ) -> RuleOutcome:
        algorithm = self.scope.algorithm or ""
        winner = winner_of(algorithm, inventory)
        if winner is None:
            return _no_data(self.label, f"{algorithm}: no registered driver in the inventory")
        series = _winner_series(measurements, self.scope, winner)
        if series is None:
            return _no_data(
                self.label,
                f"{algorithm}: winner {winner.driver} not measured"
                f"{_range_words(self.scope)}{_scope_words(self.scope)}",
            )
        return _judge_winner(self, winner, series)


@dataclass(frozen=True)
class NoRegressionRule:
    TYPE: ClassVar[str] = "no-regression"

    scope: Scope
    max_drop: float = DEFAULT_MAX_DROP
    driver: str | None = None
    name: str | None = None

    @property
    def label(self) -> str:
        return self.name or f"{self.TYPE} {self.scope.algorithm or 'all'}"

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], where: str) -> NoRegressionRule:
        reader = _RuleReader(data, where, cls.TYPE)
        rule = cls(
            scope=reader.scope(algorithm_required=False),
            max_drop=reader.fraction("max_drop", DEFAULT_MAX_DROP),
            driver=reader.optional_string("driver"),
            name=reader.optional_string("name"),
        )
        reader.finish()
        return rule

    def admits(self, measurement: Measurement) -> bool:
        return self.scope.admits(measurement) and self.driver in (None, measurement.driver)

    def evaluate(
        self,
        measurements: Sequence[Measurement],
        inventory: Inventory,
        baseline: Results | None = None,
    ) -> RuleOutcome:
        if baseline is None:
            return _no_data(
                self.label, "no baseline results to compare against (give a baseline JSON)"
            )
        comparisons = compare_measurements(
            [m for m in baseline.measurements if self.admits(m)],
            [m for m in measurements if self.admits(m)],
            self.max_drop,
        )
        if not comparisons:
            return _no_data(
                self.label, "no measurement matches the baseline" + _scope_words(self.scope)
            )
        failed = [comparison for comparison in comparisons if comparison.failed]
        if not failed:
            message = (
                f"{len(comparisons)} measurements within {self.max_drop:.0%} of the baseline "
                "or within noise"
            )
            return RuleOutcome(Verdict(self.label, True, message))
        lines = [_regression_words(comparison) for comparison in failed]
        shown = "; ".join(lines[:3]) + (f"; and {len(lines) - 3} more" if len(lines) > 3 else "")
        message = (
            f"{len(failed)} of {len(comparisons)} measurements regress "
            f"more than {self.max_drop:.0%}: {shown}"
        )
        findings = [Finding("regression", c.algorithm, line) for c, line in zip(failed, lines)]
        return RuleOutcome(Verdict(self.label, False, message), findings)


def _regression_words(comparison: Comparison) -> str:
    return (
        f"{describe_comparison(comparison)} {format_mib_s(comparison.baseline)} -> "
        f"{format_mib_s(comparison.current)} MiB/s ({comparison.change:+.1%})"
    )


Rule = Union[HwBeatsSwRule, FloorRule, WinnerFastestRule, NoRegressionRule]
RULE_TYPES: dict[str, Callable[[Mapping[str, Any], str], Rule]] = {
    HwBeatsSwRule.TYPE: HwBeatsSwRule.from_dict,
    FloorRule.TYPE: FloorRule.from_dict,
    WinnerFastestRule.TYPE: WinnerFastestRule.from_dict,
    NoRegressionRule.TYPE: NoRegressionRule.from_dict,
}


def rule_from_dict(data: Mapping[str, Any], where: str) -> Rule:
    """Build the rule a `[[rule]]` table describes; RuleError names `where` and the key."""
    if not isinstance(data, Mapping):
        raise RuleError(f"{where}: expected a table, got {type(data).__name__}")
    rule_type = data.get("type")
    if rule_type is None:
        raise RuleError(f"{where}: missing key 'type' (one of {', '.join(RULE_TYPES)})")
    if rule_type not in RULE_TYPES:
        raise RuleError(
            f"{where}: unknown rule type {rule_type!r} (one of {', '.join(RULE_TYPES)})"
        )
    return RULE_TYPES[rule_type](data, where)


def rules_from_list(tables: Sequence[Mapping[str, Any]], file_name: str) -> list[Rule]:
    """All `[[rule]]` tables of a profile; rules are numbered from 1 in messages."""
    return [
        rule_from_dict(table, f"{file_name} rule #{number}")
        for number, table in enumerate(tables, 1)
    ]


def evaluate_rules(
    rules: Iterable[Rule],
    measurements: Sequence[Measurement],
    inventory: Inventory,
    baseline: Results | None = None,
) -> list[RuleOutcome]:
    return [rule.evaluate(measurements, inventory, baseline) for rule in rules]


# ---------------------------------------------------------------------------------------
# inventory knowledge


@dataclass(frozen=True)
class Winner:
    driver: str
    priority: int | None


def driver_classes(inventory: Inventory) -> dict[str, str]:
    """Driver name -> class, from the inventory entries that have one."""
    return {
        str(entry["driver"]): str(entry["class"])
        for entry in inventory
        if entry.get("driver") and entry.get("class")
    }


def class_of(measurement: Measurement, classes: Mapping[str, str]) -> str | None:
    if measurement.driver_class:
        return measurement.driver_class
    return classes.get(measurement.driver or "")


def winner_of(algorithm: str, inventory: Inventory) -> Winner | None:
    """The driver the kernel hands out for `algorithm`: the flagged winner, else top priority."""
    entries = [
        entry for entry in inventory if entry.get("name") == algorithm and entry.get("driver")
    ]
    flagged = [entry for entry in entries if entry.get("winner") is True]
    chosen = flagged or sorted(entries, key=_priority, reverse=True)[:1]
    if not chosen:
        return None
    return Winner(
        driver=str(chosen[0]["driver"]),
        priority=_priority(chosen[0]) if "priority" in chosen[0] else None,
    )


def _priority(entry: Mapping[str, Any]) -> int:
    try:
        return int(entry.get("priority", 0))
    except (TypeError, ValueError):
        return 0


# ---------------------------------------------------------------------------------------
# picking candidates and building series

_K = TypeVar("_K", bound=Hashable)


def _group(
    items: Iterable[Measurement], key_of: Callable[[Measurement], _K]
) -> dict[_K, list[Measurement]]:
    grouped: dict[_K, list[Measurement]] = {}
    for item in items:
        grouped.setdefault(key_of(item), []).append(item)
    return grouped


def _grouped_by_size(
    measurements: Iterable[Measurement], scope: Scope
) -> dict[GroupKey, dict[int | None, list[Measurement]]]:
    """Measurements with a driver, in scope except for block size, by group then by size."""
    in_scope = [m for m in measurements if m.driver is not None and scope.admits_path(m)]
    return {
        group: _group(members, lambda m: m.block_size)
        for group, members in _group(in_scope, lambda m: (m.source, m.key_bits, m.op)).items()
    }


def best_candidate(
    measurements: Sequence[Measurement], side: str, classes: Mapping[str, str]
) -> Candidate | None:
    """The fastest (median) driver matching `side`: a class name, or else a driver name."""
    if side in DRIVER_CLASSES:
        matching = [m for m in measurements if class_of(m, classes) == side]
    else:
        matching = [m for m in measurements if m.driver == side]
    candidates = [
        Candidate(driver, class_of(members[0], classes), pooled_stats(members))
        for driver, members in _group(matching, lambda m: m.driver or "").items()
    ]
    return max(candidates, key=lambda candidate: candidate.stats.median, default=None)


def _floor_points(
    measurements: Sequence[Measurement], scope: Scope, classes: Mapping[str, str], target: str
) -> list[tuple[GroupKey, int | None, Candidate]]:
    """(group, size, best driver for `target`) at every size in range where one was measured."""
    points = []
    for group, by_size in _grouped_by_size(measurements, scope).items():
        for size in sorted(by_size, key=_size_order):
            candidate = best_candidate(by_size[size], target, classes)
            if candidate is not None and scope.block_sizes.contains(size):
                points.append((group, size, candidate))
    return points


def _pair_series(
    measurements: Sequence[Measurement],
    scope: Scope,
    classes: Mapping[str, str],
    first: str,
    second: str,
) -> dict[GroupKey, list[PairPoint]]:
    """Per group, `first` against `second` at every size where both were measured."""
    series: dict[GroupKey, list[PairPoint]] = {}
    for group, by_size in _grouped_by_size(measurements, scope).items():
        points = []
        for size in sorted(by_size, key=_size_order):
            one = best_candidate(by_size[size], first, classes)
            other = best_candidate(by_size[size], second, classes)
            if one is not None and other is not None:
                points.append(PairPoint(size, one, other, ratio_interval(one.stats, other.stats)))
        series[group] = points
    return series


def _winner_series(
    measurements: Sequence[Measurement], scope: Scope, winner: Winner
) -> dict[GroupKey, list[PairPoint]] | None:
    """Per group and size in range: the winner against the fastest other measured driver."""
    series: dict[GroupKey, list[PairPoint]] = {}
    winner_seen = False
    for group, by_size in _grouped_by_size(measurements, scope).items():
        points = []
        for size in sorted(by_size, key=_size_order):
            if not scope.block_sizes.contains(size):
                continue
            own = [m for m in by_size[size] if m.driver == winner.driver]
            others = [m for m in by_size[size] if m.driver != winner.driver]
            winner_seen = winner_seen or bool(own)
            fastest = _fastest_driver(others)
            if own and fastest is not None:
                mine = Candidate(winner.driver, own[0].driver_class, pooled_stats(own))
                points.append(
                    PairPoint(size, mine, fastest, ratio_interval(mine.stats, fastest.stats))
                )
        series[group] = points
    return series if winner_seen else None


def _fastest_driver(measurements: Sequence[Measurement]) -> Candidate | None:
    candidates = [
        Candidate(driver, members[0].driver_class, pooled_stats(members))
        for driver, members in _group(measurements, lambda m: m.driver or "").items()
    ]
    return max(candidates, key=lambda candidate: candidate.stats.median, default=None)


def _size_order(size: int | None) -> int:
    return -1 if size is None else size


def _missing_side(
    measurements: Sequence[Measurement],
    scope: Scope,
    classes: Mapping[str, str],
    sides: Sequence[str],
) -> str | None:
    """The first side with no measurement at all in scope (any block size), else None."""
    in_scope = [m for m in measurements if m.driver is not None and scope.admits_path(m)]
    for side in sides:
        if best_candidate(in_scope, side, classes) is None:
            return f"{side} driver" if side in DRIVER_CLASSES else side
    return None


# ---------------------------------------------------------------------------------------
# judging


def _judge_hw_vs_sw(rule: HwBeatsSwRule, series: Mapping[GroupKey, list[PairPoint]]) -> RuleOutcome:
    size_range = rule.scope.block_sizes
    several = sum(1 for points in series.values() if points) > 1
    failures: list[str] = []
    findings: list[Finding] = []
    passes: list[str] = []
    for group, points in series.items():
        in_range = [point for point in points if size_range.contains(point.block_size)]
        if not in_range:
            continue
        context = _context(rule.scope.algorithm or "", group, several)
        crossover_words = _crossover_words(points, rule.min_ratio)
        failing = [point for point in in_range if point.interval.clearly_below(rule.min_ratio)]
        if failing:
            detail = _hw_sw_failure(context, rule, failing, crossover_words)
            failures.append(detail)
            findings.append(_hw_loses_finding(rule, group, failing, detail))
        else:
            passes.append(_hw_sw_pass(context, rule, in_range, crossover_words))
    if not failures and not passes:
        return _no_data(
            rule.label,
            f"{rule.scope.algorithm}: no block size{_range_words(rule.scope)} with both "
            f"{rule.hw} and {rule.sw} measured{_scope_words(rule.scope)}",
        )
    if failures:
        return RuleOutcome(Verdict(rule.label, False, "; ".join(failures)), findings)
    return RuleOutcome(Verdict(rule.label, True, "; ".join(passes)))


def _hw_sw_failure(
    context: str, rule: HwBeatsSwRule, failing: Sequence[PairPoint], crossover_words: str
) -> str:
    first = failing[0]
    text = (
        f"{context}: {_side(rule.hw, first.first)} is {format_ratio(first.interval.ratio)}x "
        f"{_side(rule.sw, first.second)} at {_size_words(first.block_size)} "
        f"(needs >= {format_min_ratio(rule.min_ratio)}x {rule.scope.block_sizes.describe()})"
    )
    if len(failing) > 1:
        text += "; also below at " + _sizes_list([point.block_size for point in failing[1:]])
    return f"{text}; {crossover_words}"


def _hw_sw_pass(
    context: str, rule: HwBeatsSwRule, in_range: Sequence[PairPoint], crossover_words: str
) -> str:
    lowest = min(in_range, key=lambda point: point.interval.ratio)
    return (
        f"{context}: {_side(rule.hw, lowest.first)} >= {format_min_ratio(rule.min_ratio)}x "
        f"{_side(rule.sw, lowest.second)} {rule.scope.block_sizes.describe()} "
        f"(lowest {format_ratio(lowest.interval.ratio)}x at {_size_words(lowest.block_size)}); "
        f"{crossover_words}"
    )


def _hw_loses_finding(
    rule: HwBeatsSwRule, group: GroupKey, failing: Sequence[PairPoint], detail: str
) -> Finding:
    return Finding(
        "hw-loses-to-sw",
        rule.scope.algorithm or "",
        detail,
        {
            **_group_extra(group),
            "min_ratio": rule.min_ratio,
            "points": [_point_extra(p) for p in failing],
        },
    )


def _crossover_words(points: Sequence[PairPoint], min_ratio: float) -> str:
    size = _series_crossover(points, min_ratio)
    return "no crossover" if size is None else f"crossover {size} B"


def _series_crossover(points: Sequence[PairPoint], min_ratio: float) -> int | None:
    ratios = {
        point.block_size: point.interval.ratio for point in points if point.block_size is not None
    }
    return crossover(ratios, min_ratio)


def _judge_floor(
    rule: FloorRule, points: Sequence[tuple[GroupKey, int | None, Candidate]]
) -> RuleOutcome:
    floor_bps = rule.min_mib_s * MIB
    several = len({group for group, _, _ in points}) > 1
    algorithm = rule.scope.algorithm or ""
    below = [(group, size, c) for group, size, c in points if c.stats.ci_high < floor_bps]
    where = rule.scope.block_sizes.describe()
    if below:
        details = [
            f"{_context(algorithm, group, several)}: {_side(rule.target, c)} gives "
            f"{format_mib_s(c.stats.median)} MiB/s at {_size_words(size)} "
            f"(floor {rule.min_mib_s:g} MiB/s {where})"
            for group, size, c in below
        ]
        findings = [
            Finding(
                "below-floor",
                algorithm,
                detail,
                {
                    **_group_extra(group),
                    "block_size": size,
                    "driver": c.driver,
                    "bytes_per_second": c.stats.median,
                },
            )
            for detail, (group, size, c) in zip(details, below)
        ]
        return RuleOutcome(Verdict(rule.label, False, "; ".join(details)), findings)
    group, size, lowest = min(points, key=lambda point: point[2].stats.median)
    message = (
        f"{_context(algorithm, group, several)}: {_side(rule.target, lowest)} "
        f">= {rule.min_mib_s:g} MiB/s {where} "
        f"(lowest {format_mib_s(lowest.stats.median)} MiB/s at {_size_words(size)})"
    )
    return RuleOutcome(Verdict(rule.label, True, message))


def _judge_winner(
    rule: WinnerFastestRule, winner: Winner, series: Mapping[GroupKey, list[PairPoint]]
) -> RuleOutcome:
    algorithm = rule.scope.algorithm or ""
    threshold = 1.0 - rule.tolerance
    several = sum(1 for points in series.values() if points) > 1
    details: list[str] = []
    findings: list[Finding] = []
    for group, points in series.items():
        slower = [point for point in points if point.interval.clearly_below(threshold)]
        if slower:
            detail = (
                f"{_context(algorithm, group, several)}: {_winner_slower_words(winner, slower)}"
            )
            details.append(detail)
            findings.append(_winner_finding(algorithm, winner, group, slower, detail))
    if details:
        return RuleOutcome(Verdict(rule.label, False, "; ".join(details)), findings)
    compared = sum(len(points) for points in series.values())
    if not compared:
        message = f"{algorithm}: winner {_winner_words(winner)} is the only driver measured"
    else:
        message = (
            f"{algorithm}: winner {_winner_words(winner)} is the fastest within noise "
            f"{rule.scope.block_sizes.describe()} ({compared} comparisons)"
        )
    return RuleOutcome(Verdict(rule.label, True, message))


def _winner_slower_words(winner: Winner, slower: Sequence[PairPoint]) -> str:
    parts = [
        f"{format_ratio(point.interval.ratio)}x {point.second.driver} "
        f"at {_size_words(point.block_size)}"
        for point in slower
    ]
    return f"winner {_winner_words(winner)} is slower than another driver: " + ", ".join(parts)


def _winner_words(winner: Winner) -> str:
    return (
        winner.driver
        if winner.priority is None
        else f"{winner.driver} (priority {winner.priority})"
    )


def _winner_finding(
    algorithm: str, winner: Winner, group: GroupKey, slower: Sequence[PairPoint], detail: str
) -> Finding:
    extra = {
        **_group_extra(group),
        "winner": winner.driver,
        "priority": winner.priority,
        "points": [_point_extra(point) for point in slower],
    }
    return Finding("winner-not-fastest", algorithm, detail, extra)


# ---------------------------------------------------------------------------------------
# findings without a rule


def winner_not_fastest_findings(
    measurements: Sequence[Measurement],
    inventory: Inventory,
    tolerance: float = DEFAULT_WINNER_TOLERANCE,
) -> list[Finding]:
    """Every algorithm whose winner is clearly slower than another measured driver."""
    findings = []
    for algorithm in _algorithms_with_drivers(measurements):
        winner = winner_of(algorithm, inventory)
        if winner is None:
            continue
        series = _winner_series(measurements, Scope(algorithm), winner) or {}
        for group, points in series.items():
            slower = [point for point in points if point.interval.clearly_below(1.0 - tolerance)]
            if slower:
                detail = (
                    f"{_context(algorithm, group, True)}: {_winner_slower_words(winner, slower)}"
                )
                findings.append(_winner_finding(algorithm, winner, group, slower, detail))
    return findings


def hw_loses_to_sw_findings(
    measurements: Sequence[Measurement], inventory: Inventory, min_ratio: float = DEFAULT_MIN_RATIO
) -> list[Finding]:
    """Every hardware driver clearly slower than a software path (generic; cpu-accel for an
    offload engine) at some block size."""
    findings = []
    for algorithm, group, hw, sw, points in _hw_sw_pairs(measurements, inventory):
        losing = [point for point in points if point.interval.clearly_below(min_ratio)]
        if not losing:
            continue
        worst = min(losing, key=lambda point: point.interval.ratio)
        detail = (
            f"{_context(algorithm, group, True)}: {hw} is slower than {sw} at "
            f"{_sizes_list([point.block_size for point in losing])} "
            f"({format_ratio(worst.interval.ratio)}x at {_size_words(worst.block_size)})"
        )
        extra = {
            **_group_extra(group),
            "min_ratio": min_ratio,
            "points": [_point_extra(p) for p in losing],
        }
        findings.append(Finding("hw-loses-to-sw", algorithm, detail, extra))
    return findings


def crossover_findings(
    measurements: Sequence[Measurement], inventory: Inventory, min_ratio: float = DEFAULT_MIN_RATIO
) -> list[Finding]:
    """For every hardware/software driver pair measured at block sizes: where HW takes over."""
    findings = []
    for algorithm, group, hw, sw, points in _hw_sw_pairs(measurements, inventory):
        sized = [point for point in points if point.block_size is not None]
        if not sized:
            continue
        size = _series_crossover(sized, min_ratio)
        needs = f"{format_min_ratio(min_ratio)}x"
        if size is None:
            largest = sized[-1]
            words = (
                f"never reaches {needs} {sw} (largest size {_size_words(largest.block_size)}: "
                f"{format_ratio(largest.interval.ratio)}x)"
            )
        elif size == sized[0].block_size:
            words = f"is >= {needs} {sw} at every measured size (from {size} B)"
        else:
            words = f"reaches {needs} {sw} from {size} B on"
        extra = {
            **_group_extra(group),
            "crossover": size,
            "min_ratio": min_ratio,
            "ratios": [[point.block_size, point.interval.ratio] for point in sized],
        }
        findings.append(
            Finding(
                "crossover", algorithm, f"{_context(algorithm, group, True)}: {hw} {words}", extra
            )
        )
    return findings


# (faster-path classes, slower-path classes) compared by the findings. Against an offload
# engine the CPU's own crypto instructions are a software path too: virtio-crypto against
# aesni on the QEMU board, CESA against NEON on a Marvell board.
_HW_SW_CLASS_PAIRS = ((HARDWARE_CLASSES, (GENERIC,)), ((OFFLOAD,), (CPU_ACCEL,)))


def _hw_sw_pairs(
    measurements: Sequence[Measurement], inventory: Inventory
) -> list[tuple[str, GroupKey, str, str, list[PairPoint]]]:
    """(algorithm, group, hw words, sw words, points) for each hardware x software driver
    pair: hardware x generic, and offload x cpu-accel."""
    classes = driver_classes(inventory)
    pairs = []
    for algorithm in _algorithms_with_drivers(measurements):
        scope = Scope(algorithm)
        for group, by_size in _grouped_by_size(measurements, scope).items():
            members = [m for at_size in by_size.values() for m in at_size]
            for hw_classes, sw_classes in _HW_SW_CLASS_PAIRS:
                for hw_driver in _drivers_of(members, classes, hw_classes):
                    for sw_driver in _drivers_of(members, classes, sw_classes):
                        points = _pair_series(members, scope, classes, hw_driver, sw_driver).get(
                            group, []
                        )
                        if points:
                            hw_words = f"{points[0].first.driver_class} {hw_driver}"
                            sw_class = points[0].second.driver_class or sw_classes[0]
                            sw_words = f"{sw_class} {sw_driver}"
                            pairs.append((algorithm, group, hw_words, sw_words, points))
    return pairs


def _drivers_of(
    members: Sequence[Measurement], classes: Mapping[str, str], wanted: Sequence[str]
) -> list[str]:
    found: dict[str, None] = {}
    for measurement in members:
        if measurement.driver and class_of(measurement, classes) in wanted:
            found[measurement.driver] = None
    return list(found)


def _algorithms_with_drivers(measurements: Sequence[Measurement]) -> list[str]:
    return list(dict.fromkeys(m.algorithm for m in measurements if m.driver is not None))


# ---------------------------------------------------------------------------------------
# words and numbers


def _no_data(label: str, message: str) -> RuleOutcome:
    return RuleOutcome(Verdict(label, False, message))


def _side(rule_side: str, candidate: Candidate) -> str:
    """'offload virtio_crypto_aes_cbc' when the rule names a class, else the driver."""
    if rule_side in DRIVER_CLASSES:
        return f"{rule_side} {candidate.driver}"
    return candidate.driver


def _context(algorithm: str, group: GroupKey, qualified: bool) -> str:
    """'cbc(aes)', or 'cbc(aes) [afalg, 128-bit key, encrypt]' when series need telling apart."""
    if not qualified:
        return algorithm
    source, key_bits, op = group
    parts = [source] + ([f"{key_bits}-bit key"] if key_bits is not None else []) + [op]
    return f"{algorithm} [{', '.join(parts)}]"


def _range_words(scope: Scope) -> str:
    """' from 4096 B' for a restricted range; nothing when every size counts."""
    return "" if scope.block_sizes.is_everything else f" {scope.block_sizes.describe()}"


def _scope_words(scope: Scope) -> str:
    parts = [f"source {scope.source}"] if scope.source else []
    parts += [f"{scope.key_bits}-bit key"] if scope.key_bits is not None else []
    parts += [f"op {scope.op}"] if scope.op else []
    return f" ({', '.join(parts)})" if parts else ""


def _size_words(size: int | None) -> str:
    return "no block size" if size is None else f"{size} B"


def _sizes_list(sizes: Sequence[int | None]) -> str:
    known = [str(size) for size in sizes if size is not None]
    return ", ".join(known) + " B" if known else "no block size"


def _group_extra(group: GroupKey) -> dict[str, Any]:
    source, key_bits, op = group
    return {"source": source, "key_bits": key_bits, "op": op}


def _point_extra(point: PairPoint) -> dict[str, Any]:
    return {
        "block_size": point.block_size,
        "driver": point.first.driver,
        "bytes_per_second": point.first.stats.median,
        "other_driver": point.second.driver,
        "other_bytes_per_second": point.second.stats.median,
        "ratio": point.interval.ratio,
        "ratio_low": point.interval.low,
        "ratio_high": point.interval.high,
    }


# ---------------------------------------------------------------------------------------
# reading rule tables


class _RuleReader:
    """Typed access to one rule table; unknown keys are reported by finish()."""

    def __init__(self, data: Mapping[str, Any], where: str, rule_type: str) -> None:
        if not isinstance(data, Mapping):
            raise RuleError(f"{where}: expected a table, got {type(data).__name__}")
        if data.get("type", rule_type) != rule_type:
            raise RuleError(f"{where}: key 'type' is {data.get('type')!r}, expected {rule_type!r}")
        self._data = data
        self._where = where
        self._read = {"type"}

    def finish(self) -> None:
        unknown = [key for key in self._data if key not in self._read]
        if unknown:
            known = ", ".join(sorted(self._read - {"type"}))
            raise RuleError(f"{self._where}: unknown key {unknown[0]!r} (known: {known})")

    def _get(self, key: str) -> Any:
        self._read.add(key)
        return self._data.get(key)

    def _wrong(self, key: str, expected: str, value: Any) -> RuleError:
        return RuleError(
            f"{self._where}: key {key!r} must be {expected}, got {type(value).__name__} {value!r}"
        )

    def string(self, key: str) -> str:
        value = self._get(key)
        if value is None:
            raise RuleError(f"{self._where}: missing key {key!r}")
        if not isinstance(value, str) or not value:
            raise self._wrong(key, "a non-empty string", value)
        return value

    def optional_string(self, key: str) -> str | None:
        if self._get(key) is None:
            return None
        return self.string(key)

    def optional_int(self, key: str) -> int | None:
        value = self._get(key)
        if value is not None and (
            isinstance(value, bool) or not isinstance(value, int) or value <= 0
        ):
            raise self._wrong(key, "a positive integer", value)
        return value

    def positive_number(self, key: str, default: float | None = None) -> float:
        value = self._get(key)
        if value is None:
            if default is None:
                raise RuleError(f"{self._where}: missing key {key!r}")
            return default
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0:
            raise self._wrong(key, "a positive number", value)
        return float(value)

    def fraction(self, key: str, default: float) -> float:
        value = self._get(key)
        if value is None:
            return default
        if isinstance(value, str):
            try:
                return parse_fraction(value)
            except ValueError as error:
                raise RuleError(f"{self._where}: key {key!r}: {error}") from None
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value < 1:
            raise self._wrong(key, "a fraction below 1 (0.1) or a percentage ('10%')", value)
        return float(value)

    def block_sizes(self) -> BlockSizeRange:
        value = self._get("block_sizes")
        if value is None:
            return ALL_BLOCK_SIZES
        if isinstance(value, list) and all(
            isinstance(item, int) and not isinstance(item, bool) for item in value
        ):
            value = ",".join(str(item) for item in value)
        if not isinstance(value, str):
            raise self._wrong("block_sizes", "a range string such as '>=65536'", value)
        try:
            return parse_block_sizes(value)
        except ValueError as error:
            raise RuleError(f"{self._where}: key 'block_sizes': {error}") from None

    def scope(self, algorithm_required: bool) -> Scope:
        algorithm = (
            self.string("algorithm") if algorithm_required else self.optional_string("algorithm")
        )
        return Scope(
            algorithm=algorithm,
            block_sizes=self.block_sizes(),
            source=self.optional_string("source"),
            key_bits=self.optional_int("key_bits"),
            op=self.optional_string("op"),
        )
