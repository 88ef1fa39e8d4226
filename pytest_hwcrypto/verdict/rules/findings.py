# SPDX-License-Identifier: MIT
"""Findings that need no rule: what the throughput suite records for every algorithm.

Recorded, never failed on (docs/results.md, "Reading the results"): the winner clearly slower than
another driver, a hardware driver clearly slower than a software path, and where each
hardware/software pair crosses over.  Hardware is compared with `generic`, and an offload
engine also with `cpu-accel` (series.HW_SW_CLASS_PAIRS).
"""

from __future__ import annotations

from collections.abc import Sequence

from pytest_hwcrypto.model.results import Finding, Measurement
from pytest_hwcrypto.verdict.rules import wording
from pytest_hwcrypto.verdict.rules.judge import slower_winner_findings
from pytest_hwcrypto.verdict.rules.model import DEFAULT_WINNER_TOLERANCE, Inventory, Scope
from pytest_hwcrypto.verdict.rules.series import (
    algorithms_with_drivers,
    driver_classes,
    hw_sw_pairs,
    recorded_winner,
    series_crossover,
    winner_series,
)
from pytest_hwcrypto.vocabulary import DEFAULT_MIN_RATIO, FindingKind


def winner_not_fastest_findings(
    measurements: Sequence[Measurement],
    inventory: Inventory,
    tolerance: float = DEFAULT_WINNER_TOLERANCE,
) -> list[Finding]:
    """Every algorithm whose winner is clearly slower than another measured driver: the
    winner-fastest rule's judgement over every size, series always named."""
    classes = driver_classes(inventory)
    findings = []
    for algorithm in algorithms_with_drivers(measurements):
        winner = recorded_winner(algorithm, inventory)
        if winner is None:
            continue
        series = winner_series(measurements, Scope(algorithm), winner, classes) or {}
        findings += slower_winner_findings(algorithm, winner, series, tolerance, qualified=True)
    return findings


def hw_loses_to_sw_findings(
    measurements: Sequence[Measurement], inventory: Inventory, min_ratio: float = DEFAULT_MIN_RATIO
) -> list[Finding]:
    """Every hardware driver clearly slower than a software path (generic; cpu-accel for an
    offload engine) at some block size."""
    findings = []
    for algorithm, group, hw, sw, points in hw_sw_pairs(measurements, inventory):
        losing = [point for point in points if point.interval.clearly_below(min_ratio)]
        if not losing:
            continue
        detail = wording.hw_loses_words(wording.context(algorithm, group, True), hw, sw, losing)
        findings.append(wording.hw_loses_finding(algorithm, group, min_ratio, losing, detail))
    return findings


def crossover_findings(
    measurements: Sequence[Measurement], inventory: Inventory, min_ratio: float = DEFAULT_MIN_RATIO
) -> list[Finding]:
    """For every hardware/software driver pair measured at block sizes: where HW takes over."""
    findings = []
    for algorithm, group, hw, sw, points in hw_sw_pairs(measurements, inventory):
        sized = [point for point in points if point.block_size is not None]
        if not sized:
            continue
        size = series_crossover(sized, min_ratio)
        words = wording.crossover_finding_words(sized, size, min_ratio, sw)
        extra = {
            **wording.group_extra(group),
            "crossover": size,
            "min_ratio": min_ratio,
            "ratios": [[point.block_size, point.interval.ratio] for point in sized],
        }
        detail = f"{wording.context(algorithm, group, True)}: {hw} {words}"
        findings.append(Finding(FindingKind.CROSSOVER, algorithm, detail, extra))
    return findings
