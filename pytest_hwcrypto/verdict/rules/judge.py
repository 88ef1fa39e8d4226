# SPDX-License-Identifier: MIT
"""The four rule types of a board profile and how each is judged.

Decisions use sample statistics so that an unchanged system does not flap (see
model/stats.py): a rule fails only when the data are *clearly* on the wrong side --
hw-beats-sw when the HW/SW ratio's upper bound is below min_ratio, floor when the upper
bound of the throughput is below the floor, winner-fastest when winner/fastest's upper bound
is below 1 - tolerance, no-regression when the drop exceeds max_drop and is beyond the
noise.  Bare numbers (tool output, no samples) are decided on their point values.

A rule without data to judge fails: the profile says this must hold, and "nothing was
measured" (a driver missing, AF_ALG masking offload engines) is exactly what CI must see.

The winner-not-fastest finding (findings.py) is this module's winner judgement applied to
every algorithm with the default tolerance: slower_winner_findings serves both.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import ClassVar, Union

from pytest_hwcrypto.model.results import Finding, Measurement, Results, Verdict
from pytest_hwcrypto.verdict.compare import compare_measurements
from pytest_hwcrypto.verdict.rules import wording
from pytest_hwcrypto.verdict.rules.model import (
    DEFAULT_WINNER_TOLERANCE,
    Candidate,
    GroupKey,
    Inventory,
    PairPoint,
    RuleOutcome,
    Scope,
    Winner,
)
from pytest_hwcrypto.verdict.rules.series import (
    driver_classes,
    floor_points,
    missing_side,
    pair_series,
    recorded_winner,
    winner_series,
)
from pytest_hwcrypto.vocabulary import (
    DEFAULT_MAX_DROP,
    DEFAULT_MIN_RATIO,
    MIB,
    FindingKind,
    RuleType,
)

# ---------------------------------------------------------------------------------------
# rule types


@dataclass(frozen=True)
class HwBeatsSwRule:
    """hw (a driver or a class) must reach min_ratio x sw (likewise) at every size in range;
    a class side is stood for by its fastest driver at each size, and named. With
    `cpu_per_byte`, hw must also spend at most that multiple of sw's CPU seconds per byte
    (Measurement.cpu_per_byte): an engine that is as fast but frees the CPU."""

    TYPE: ClassVar[RuleType] = RuleType.HW_BEATS_SW

    scope: Scope
    hw: str
    sw: str
    min_ratio: float = DEFAULT_MIN_RATIO
    name: str | None = None
    cpu_per_byte: float | None = None

    @property
    def label(self) -> str:
        return self.name or f"{self.TYPE} {self.scope.algorithm} {self.hw} vs {self.sw}"

    def evaluate(
        self,
        measurements: Sequence[Measurement],
        inventory: Inventory,
        baseline: Results | None = None,
    ) -> RuleOutcome:
        classes = driver_classes(inventory)
        missing = missing_side(measurements, self.scope, classes, (self.hw, self.sw))
        if missing is not None:
            return _no_data(
                self.label,
                f"{self.scope.algorithm}: no {wording.missing_side_words(missing)} measured"
                f"{wording.scope_words(self.scope)}",
            )
        series = pair_series(measurements, self.scope, classes, self.hw, self.sw)
        return _judge_hw_vs_sw(self, series)


@dataclass(frozen=True)
class FloorRule:
    """target (a driver or a class) must move at least min_mib_s at every size in range."""

    TYPE: ClassVar[RuleType] = RuleType.FLOOR

    scope: Scope
    target: str  # a driver name or a class
    min_mib_s: float
    name: str | None = None

    @property
    def label(self) -> str:
        return self.name or f"{self.TYPE} {self.scope.algorithm} {self.target}"

    def evaluate(
        self,
        measurements: Sequence[Measurement],
        inventory: Inventory,
        baseline: Results | None = None,
    ) -> RuleOutcome:
        points = floor_points(measurements, self.scope, driver_classes(inventory), self.target)
        if not points:
            return _no_data(
                self.label,
                f"{self.scope.algorithm}: no {self.target} measured"
                f"{wording.range_words(self.scope)}{wording.scope_words(self.scope)}",
            )
        return _judge_floor(self, points)


@dataclass(frozen=True)
class WinnerFastestRule:
    """The winner (highest priority in /proc/crypto, what dm-crypt and AF_ALG get by
    default) must be as fast as the fastest measured driver, within noise and tolerance."""

    TYPE: ClassVar[RuleType] = RuleType.WINNER_FASTEST

    scope: Scope
    tolerance: float = DEFAULT_WINNER_TOLERANCE
    name: str | None = None

    @property
    def label(self) -> str:
        return self.name or f"{self.TYPE} {self.scope.algorithm}"

    def evaluate(
        self,
        measurements: Sequence[Measurement],
        inventory: Inventory,
        baseline: Results | None = None,
    ) -> RuleOutcome:
        algorithm = self.scope.algorithm or ""
        winner = recorded_winner(algorithm, inventory)
        if winner is None:
            return _no_data(self.label, f"{algorithm}: no registered driver in the inventory")
        series = winner_series(measurements, self.scope, winner, driver_classes(inventory))
        if series is None:
            return _no_data(
                self.label,
                f"{algorithm}: winner {winner.driver} not measured"
                f"{wording.range_words(self.scope)}{wording.scope_words(self.scope)}",
            )
        return _judge_winner(self, winner, series)


@dataclass(frozen=True)
class NoRegressionRule:
    """No measurement in scope (and of `driver`, if given) is clearly slower than in the
    baseline by more than max_drop; matched as `hwcrypto compare` matches."""

    TYPE: ClassVar[RuleType] = RuleType.NO_REGRESSION

    scope: Scope
    max_drop: float = DEFAULT_MAX_DROP
    driver: str | None = None
    name: str | None = None
    # a driver, or "software": judge throughput as a multiple of it in the same run
    # (verdict/relative.py), so a board that is slower as a whole is not a regression
    relative_to: str | None = None

    @property
    def label(self) -> str:
        return self.name or f"{self.TYPE} {self.scope.algorithm or 'all'}"

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
        # the reference is in scope but need not be `driver`: filter by driver afterwards
        comparisons = [
            comparison
            for comparison in compare_measurements(
                [m for m in baseline.measurements if self.scope.admits(m)],
                [m for m in measurements if self.scope.admits(m)],
                self.max_drop,
                self.relative_to,
            )
            if self.driver in (None, comparison.driver)
        ]
        if not comparisons:
            reference = f" with {self.relative_to} measured beside it" if self.relative_to else ""
            return _no_data(
                self.label,
                f"no measurement matches the baseline{reference}" + wording.scope_words(self.scope),
            )
        failed = [comparison for comparison in comparisons if comparison.failed]
        sensitivity = wording.sensitivity_extra(comparisons, self.max_drop)
        if not failed:
            message = (
                f"no regression ({wording.could_detect_words(comparisons)}): "
                f"{len(comparisons)} measurements within {self.max_drop:.0%} of the baseline "
                f"or within noise{wording.insensitive_words(comparisons, self.max_drop)}"
            )
            return RuleOutcome(Verdict(self.label, True, message, extra=sensitivity))
        lines = [wording.regression_words(comparison) for comparison in failed]
        shown = "; ".join(lines[:3]) + (f"; and {len(lines) - 3} more" if len(lines) > 3 else "")
        message = (
            f"{len(failed)} of {len(comparisons)} measurements regress "
            f"more than {self.max_drop:.0%}: {shown}"
        )
        findings = [
            Finding(FindingKind.REGRESSION, c.algorithm, line) for c, line in zip(failed, lines)
        ]
        return RuleOutcome(Verdict(self.label, False, message, extra=sensitivity), findings)


Rule = Union[HwBeatsSwRule, FloorRule, WinnerFastestRule, NoRegressionRule]


def evaluate_rules(
    rules: Iterable[Rule],
    measurements: Sequence[Measurement],
    inventory: Inventory,
    baseline: Results | None = None,
) -> list[RuleOutcome]:
    return [rule.evaluate(measurements, inventory, baseline) for rule in rules]


# ---------------------------------------------------------------------------------------
# judging


def _no_data(label: str, message: str) -> RuleOutcome:
    return RuleOutcome(Verdict(label, False, message))


def _several(series: Mapping[GroupKey, list[PairPoint]]) -> bool:
    """More than one series with points: then messages say which series they are about."""
    return sum(1 for points in series.values() if points) > 1


def _judge_hw_vs_sw(rule: HwBeatsSwRule, series: Mapping[GroupKey, list[PairPoint]]) -> RuleOutcome:
    scope = rule.scope
    several = _several(series)
    failures: list[str] = []
    findings: list[Finding] = []
    passes: list[str] = []
    for group, points in series.items():
        in_range = [point for point in points if scope.block_sizes.contains(point.block_size)]
        if not in_range:
            continue
        context = wording.context(scope.algorithm or "", group, several)
        crossover = wording.crossover_words(points, rule.min_ratio)
        failing = [point for point in in_range if point.interval.clearly_below(rule.min_ratio)]
        cpu_failing = _cpu_failures(rule.cpu_per_byte, in_range)
        if cpu_failing and not failing:
            failures.append(
                wording.cpu_failure(context, rule.hw, rule.sw, rule.cpu_per_byte, cpu_failing)
            )
        if failing:
            detail = wording.hw_sw_failure(
                context, rule.hw, rule.sw, rule.min_ratio, scope, failing, crossover
            )
            failures.append(detail)
            findings.append(
                wording.hw_loses_finding(
                    scope.algorithm or "", group, rule.min_ratio, failing, detail
                )
            )
        elif not cpu_failing:
            passes.append(
                wording.hw_sw_pass(
                    context, rule.hw, rule.sw, rule.min_ratio, scope, in_range, crossover
                )
                + wording.cpu_pass(rule.cpu_per_byte, in_range)
            )
    if not failures and not passes:
        return _no_data(
            rule.label,
            f"{scope.algorithm}: no block size{wording.range_words(scope)} with both "
            f"{rule.hw} and {rule.sw} measured{wording.scope_words(scope)}",
        )
    if failures:
        return RuleOutcome(Verdict(rule.label, False, "; ".join(failures)), findings)
    return RuleOutcome(Verdict(rule.label, True, "; ".join(passes)))


def _cpu_failures(
    limit: float | None, points: Sequence[PairPoint]
) -> list[tuple[PairPoint, float | None]]:
    """Points where hw's CPU per byte exceeds `limit` x sw's, with that multiple (None:
    not measured on one side, which fails too -- the rule asks for it)."""
    if limit is None:
        return []
    failing: list[tuple[PairPoint, float | None]] = []
    for point in points:
        share = wording.cpu_share_of(point)
        if share is None or share > limit:
            failing.append((point, share))
    return failing


def _judge_floor(
    rule: FloorRule, points: Sequence[tuple[GroupKey, int | None, Candidate]]
) -> RuleOutcome:
    floor_bps = rule.min_mib_s * MIB
    several = len({group for group, _, _ in points}) > 1
    algorithm = rule.scope.algorithm or ""
    below = [(group, size, c) for group, size, c in points if c.stats.ci_high < floor_bps]
    if below:
        details = [
            wording.floor_below(
                wording.context(algorithm, group, several),
                rule.target,
                c,
                size,
                rule.min_mib_s,
                rule.scope,
            )
            for group, size, c in below
        ]
        findings = [
            Finding(
                FindingKind.BELOW_FLOOR,
                algorithm,
                detail,
                {
                    **wording.group_extra(group),
                    "block_size": size,
                    "driver": c.driver,
                    "bytes_per_second": c.stats.median,
                },
            )
            for detail, (group, size, c) in zip(details, below)
        ]
        return RuleOutcome(Verdict(rule.label, False, "; ".join(details)), findings)
    group, size, lowest = min(points, key=lambda point: point[2].stats.median)
    message = wording.floor_pass(
        wording.context(algorithm, group, several),
        rule.target,
        lowest,
        size,
        rule.min_mib_s,
        rule.scope,
    )
    return RuleOutcome(Verdict(rule.label, True, message))


def _judge_winner(
    rule: WinnerFastestRule, winner: Winner, series: Mapping[GroupKey, list[PairPoint]]
) -> RuleOutcome:
    algorithm = rule.scope.algorithm or ""
    findings = slower_winner_findings(
        algorithm, winner, series, rule.tolerance, qualified=_several(series)
    )
    if findings:
        message = "; ".join(finding.detail for finding in findings)
        return RuleOutcome(Verdict(rule.label, False, message), findings)
    compared = sum(len(points) for points in series.values())
    if not compared:
        message = f"{algorithm}: winner {wording.winner_words(winner)} is the only driver measured"
    else:
        message = (
            f"{algorithm}: winner {wording.winner_words(winner)} is the fastest within noise "
            f"{rule.scope.block_sizes.describe()} ({compared} comparisons)"
        )
    return RuleOutcome(Verdict(rule.label, True, message))


def slower_winner_findings(
    algorithm: str,
    winner: Winner,
    series: Mapping[GroupKey, list[PairPoint]],
    tolerance: float,
    qualified: bool,
) -> list[Finding]:
    """One winner-not-fastest finding per series where the winner is clearly slower than
    its fastest rival by more than `tolerance`, listing those sizes.

    The winner-fastest rule fails with these details; without a rule they are recorded as
    they are.  `qualified` names the series in each detail (a rule does so only when it
    spans several; rule-free findings always do, since they are read out of context).
    """
    threshold = 1.0 - tolerance
    findings = []
    for group, points in series.items():
        slower = [point for point in points if point.interval.clearly_below(threshold)]
        if slower:
            detail = (
                f"{wording.context(algorithm, group, qualified)}: "
                f"{wording.winner_slower_words(winner, slower)}"
            )
            findings.append(wording.winner_finding(algorithm, winner, group, slower, detail))
    return findings
