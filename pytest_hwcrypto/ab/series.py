# SPDX-License-Identifier: MIT
"""From the slices of an A/B run to verdicts per series and what changed between kernels (pure).

A *series* is one measured path and driver (source, algorithm, key size, block size, op,
driver); a series bound by name keys on the name, and records which driver served on each
side. Each complete pair gives a series one A value and one B value: the median of that
slice's samples. verdict/paired.py judges the pairs; the family of questions is every
series times every planned look, so one run of an unchanged kernel says "regressed"
anywhere with probability at most alpha.

When both slices of a pair timed the host's user-space speed around every sample
(measure/host_speed.py, `hwcrypto ab --host-speed`), a series' value in that pair is the
median of sample / host speed instead: the share of the load that moved between the two
slices cancels. The medians shown stay in bytes/s; the yardstick itself is a series of
its own (`HOST_SPEED_SERIES`, the median host speed of the slice), so a kernel that
slows plain user-space code is seen rather than divided away.

Beside the numbers: drivers registered in only one kernel, names whose winner changed,
self-tests that changed, findings (hw-loses-to-sw, crossover, winner-not-fastest) that
appear or vanish, and series measured on one side only.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Optional

from pytest_hwcrypto.ab.document import AbDocument, PairRecord
from pytest_hwcrypto.ab.slice import BY_NAME_KEY
from pytest_hwcrypto.model.results import HOST_SPEED_KEY, ROUNDS_KEY, Measurement
from pytest_hwcrypto.verdict.paired import PairedComparison, PairedVerdict, judge_pairs

SeriesKey = tuple[str, str, Optional[int], Optional[int], str, str]
BY_NAME = "(by name)"
HOST_SPEED_SERIES: SeriesKey = ("user space", "sha256", None, None, "hash", "(host speed)")


def series_key(measurement: Measurement) -> SeriesKey:
    driver = BY_NAME if measurement.extra.get(BY_NAME_KEY) else (measurement.driver or "?")
    return (
        measurement.source,
        measurement.algorithm,
        measurement.key_bits,
        measurement.block_size,
        measurement.op,
        driver,
    )


def describe_key(key: SeriesKey) -> str:
    source, algorithm, key_bits, block_size, op, driver = key
    bits = f" {key_bits}-bit" if key_bits else ""
    size = f" {block_size} B" if block_size is not None else ""
    return f"{algorithm} [{source}{bits} {op}]{size} {driver}"


@dataclass
class SeriesPairs:
    key: SeriesKey
    a: list[float] = field(default_factory=list)  # what is judged: bytes/s or per host speed
    b: list[float] = field(default_factory=list)
    a_shown: list[float] = field(default_factory=list)  # bytes/s, for reading
    b_shown: list[float] = field(default_factory=list)
    normalised: bool = False
    served_a: set[str] = field(default_factory=set)
    served_b: set[str] = field(default_factory=set)
    only: str | None = None  # "A" or "B" when one side never measured it


@dataclass(frozen=True)
class SeriesVerdict:
    key: SeriesKey
    a_median: float
    b_median: float
    comparison: PairedComparison
    served: str = ""  # by-name series: "xts-aes-aesni -> xts(ecb(aes-generic))"
    normalised: bool = False  # judged per unit of host speed (module docstring)
    # The confidence the verdict was taken at: 1 - alpha / (series x looks) (Bonferroni).
    decision_level: float = math.nan

    def to_json(self) -> dict[str, Any]:
        c = self.comparison
        source, algorithm, key_bits, block_size, op, driver = self.key
        return {
            "source": source,
            "algorithm": algorithm,
            "key_bits": key_bits,
            "block_size": block_size,
            "op": op,
            "driver": driver,
            "served": self.served,
            "pairs": c.pairs,
            "a_bytes_per_second": self.a_median,
            "b_bytes_per_second": self.b_median,
            "change": c.change,
            "change_low": c.change_low,
            "change_high": c.change_high,
            "decision_low": c.decision_low,
            "decision_high": c.decision_high,
            "decision_level": self.decision_level,
            "p_value": c.p_value,
            "verdict": c.verdict.value,
            "note": c.note,
            "per_host_speed": self.normalised,
        }


def collect_pairs(pairs: Iterable[PairRecord]) -> dict[SeriesKey, SeriesPairs]:
    """Per series, the A and B values of every complete pair measuring it on both sides."""
    found: dict[SeriesKey, SeriesPairs] = {}
    seen_on: dict[SeriesKey, set[str]] = {}
    for pair in pairs:
        if not pair.complete:
            continue
        measured = {side: record.measurements() for side, record in pair.slices.items()}
        per_side = {side: {series_key(m): m for m in ms} for side, ms in measured.items()}
        for side, by_key in per_side.items():
            for key in by_key:
                seen_on.setdefault(key, set()).add(side)
        # per host speed only when every measurement of both slices carries it
        normalise = all(host_speeds(m) for ms in measured.values() for m in ms)
        for key, a_measurement in per_side["A"].items():
            b_measurement = per_side["B"].get(key)
            if b_measurement is None:
                continue
            series = found.setdefault(key, SeriesPairs(key))
            series.a_shown.append(a_measurement.bytes_per_second)
            series.b_shown.append(b_measurement.bytes_per_second)
            series.a.append(per_host_speed(a_measurement) if normalise else series.a_shown[-1])
            series.b.append(per_host_speed(b_measurement) if normalise else series.b_shown[-1])
            series.normalised = normalise
            series.served_a.add(a_measurement.driver or "?")
            series.served_b.add(b_measurement.driver or "?")
        if normalise and measured["A"] and measured["B"]:
            speeds = [slice_host_speed(measured[side]) for side in ("A", "B")]
            yardstick = found.setdefault(HOST_SPEED_SERIES, SeriesPairs(HOST_SPEED_SERIES))
            yardstick.a.append(speeds[0])
            yardstick.b.append(speeds[1])
            yardstick.a_shown.append(speeds[0])
            yardstick.b_shown.append(speeds[1])
    for key, sides in seen_on.items():
        if key not in found and len(sides) == 1:
            found[key] = SeriesPairs(key, only=next(iter(sides)))
    return found


def host_speeds(measurement: Measurement) -> list[float]:
    """The host speeds timed around the samples, aligned with them; [] if absent or not."""
    speeds = measurement.extra.get(HOST_SPEED_KEY)
    if not isinstance(speeds, list) or len(speeds) != len(measurement.samples):
        return []
    if not all(isinstance(v, (int, float)) and v > 0 for v in speeds):
        return []
    return [float(v) for v in speeds]


def per_host_speed(measurement: Measurement) -> float:
    """The median of sample / host speed: bytes of crypto per byte of the yardstick."""
    return statistics.median(
        sample / speed for sample, speed in zip(measurement.samples, host_speeds(measurement))
    )


def slice_host_speed(measurements: Sequence[Measurement]) -> float:
    return statistics.median(speed for m in measurements for speed in host_speeds(m))


def judge_document(
    document: AbDocument,
    looks: int | None = None,
    pairs: Sequence[PairRecord] | None = None,
    focus: Collection[SeriesKey] = (),
) -> list[SeriesVerdict]:
    """Every series with pairs on both sides (or those in `focus`: the only questions asked,
    so the family is theirs), judged; `looks` defaults to the planned steps."""
    collected = collect_pairs(document.pairs if pairs is None else pairs)
    judged = [
        series
        for series in collected.values()
        if series.only is None and (not focus or series.key in focus)
    ]
    family = max(1, len(judged)) * max(1, looks if looks is not None else len(document.steps))
    verdicts = []
    for series in judged:
        comparison = judge_pairs(
            series.a, series.b, document.max_drop, alpha=document.alpha, family=family
        )
        served = ""
        if series.key[5] == BY_NAME:
            served = f"{'/'.join(sorted(series.served_a))} -> {'/'.join(sorted(series.served_b))}"
        verdicts.append(
            SeriesVerdict(
                series.key,
                statistics.median(series.a_shown),
                statistics.median(series.b_shown),
                comparison,
                served,
                series.normalised,
                1.0 - document.alpha / family,
            )
        )
    return verdicts


def one_sided_series(document: AbDocument) -> dict[str, list[SeriesKey]]:
    """Series measured on one side only: {"A": [...], "B": [...]}."""
    only: dict[str, list[SeriesKey]] = {"A": [], "B": []}
    for series in collect_pairs(document.pairs).values():
        if series.only is not None:
            only[series.only].append(series.key)
    return only


@dataclass(frozen=True)
class KernelChanges:
    only_a: list[str]  # drivers registered in A, not in B
    only_b: list[str]
    winners: list[tuple[str, str, str]]  # (name, winner in A, winner in B)
    selftests: list[tuple[str, str, str]]  # (driver, A's self-test, B's)
    findings_gone: list[str]  # "kind: algorithm"
    findings_new: list[str]

    def to_json(self) -> dict[str, Any]:
        return {
            "drivers_only_in_a": self.only_a,
            "drivers_only_in_b": self.only_b,
            "winners_changed": [{"name": name, "a": a, "b": b} for name, a, b in self.winners],
            "selftests_changed": [
                {"driver": driver, "a": a, "b": b} for driver, a, b in self.selftests
            ],
            "findings_gone": self.findings_gone,
            "findings_new": self.findings_new,
        }


def kernel_changes(document: AbDocument) -> KernelChanges:
    inventory_a = _visible(document.inventory.get("A", []))
    inventory_b = _visible(document.inventory.get("B", []))
    drivers_a = {str(e["driver"]): e for e in inventory_a}
    drivers_b = {str(e["driver"]): e for e in inventory_b}
    winners_a = _winners(inventory_a)
    winners_b = _winners(inventory_b)
    winners = [
        (name, winners_a[name], winners_b[name])
        for name in sorted(set(winners_a) & set(winners_b))
        if winners_a[name] != winners_b[name]
    ]
    selftests = [
        (driver, str(drivers_a[driver].get("selftest")), str(drivers_b[driver].get("selftest")))
        for driver in sorted(set(drivers_a) & set(drivers_b))
        if drivers_a[driver].get("selftest") != drivers_b[driver].get("selftest")
    ]
    found_a = _finding_names(document, "A")
    found_b = _finding_names(document, "B")
    return KernelChanges(
        only_a=sorted(set(drivers_a) - set(drivers_b)),
        only_b=sorted(set(drivers_b) - set(drivers_a)),
        winners=winners,
        selftests=selftests,
        findings_gone=sorted(found_a - found_b),
        findings_new=sorted(found_b - found_a),
    )


def _visible(inventory: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    return [e for e in inventory if e.get("driver") and not e.get("internal")]


def _winners(inventory: Sequence[Mapping[str, Any]]) -> dict[str, str]:
    return {str(e["name"]): str(e["driver"]) for e in inventory if e.get("winner")}


def _finding_names(document: AbDocument, side: str) -> set[str]:
    """Findings seen in most of a side's slices (one slice's noise is not a change)."""
    counts: dict[str, int] = {}
    slices = 0
    for pair in document.complete_pairs:
        results = pair.slices[side].results or {}
        slices += 1
        names = {
            f"{f.get('kind')}: {f.get('algorithm')}" + _finding_point(f)
            for f in results.get("findings", [])
        }
        for name in names:
            counts[name] = counts.get(name, 0) + 1
    return {name for name, count in counts.items() if 2 * count > slices}


def _finding_point(finding: Mapping[str, Any]) -> str:
    """A crossover's block size belongs to its identity (a lost crossover is a change)."""
    size = finding.get("block_size") or finding.get("crossover")
    return f" at {size} B" if isinstance(size, int) else ""


def any_regressed(verdicts: Iterable[SeriesVerdict]) -> bool:
    return any(v.comparison.verdict is PairedVerdict.REGRESSED for v in verdicts)


def undecided(verdicts: Iterable[SeriesVerdict]) -> list[SeriesVerdict]:
    return [v for v in verdicts if v.comparison.verdict is PairedVerdict.UNKNOWN]


def side_results(document: AbDocument, side: str) -> dict[str, Any]:
    """One side as a results file (pytest-hwcrypto/1): every series with the samples of all
    its complete pairs pooled, the side's inventory and kernel -- what `hwcrypto report`
    overlays and `hwcrypto compare` reads."""
    pooled: dict[SeriesKey, Measurement] = {}
    kernel: dict[str, Any] = {}
    for pair in document.complete_pairs:
        record = pair.slices[side]
        kernel = kernel or dict((record.results or {}).get("kernel") or {})
        for measurement in record.measurements():
            key = series_key(measurement)
            if key not in pooled:
                pooled[key] = measurement
                measurement.samples = list(measurement.samples)
                measurement.extra = {k: v for k, v in measurement.extra.items() if k != ROUNDS_KEY}
            else:
                pooled[key].samples.extend(measurement.samples)
    for measurement in pooled.values():
        if measurement.samples:
            measurement.bytes_per_second = statistics.median(measurement.samples)
            measurement.ci_low = measurement.ci_high = measurement.cov = None
    label = document.sides[side]
    return {
        "schema": "pytest-hwcrypto/1",
        "kernel": kernel,
        "environment": {"board": f"{document.board} {side}: {label.kernel or 'default'}"},
        "inventory": document.inventory.get(side, []),
        "measurements": [m.to_json() for m in pooled.values()],
        "findings": [],
        "verdicts": [],
    }


def bisect_side(verdict: SeriesVerdict, known_change: float) -> str | None:
    """ "slow", "fast" or None (cannot tell yet) for one bisection step.

    A bisection asks "like the good kernel, or like the bad one?", not "any change?": the
    step is compared with the midpoint of the regression the good file measured (half of
    its log change). Slow when the decision interval lies below the midpoint, fast when
    above it -- the same difficulty both ways, where "same within --max-drop" would need
    far more pairs to call a good commit good than a bad one bad.
    """
    if known_change >= 0.0:
        raise ValueError(f"the known change must be a drop, got {known_change:+.1%}")
    midpoint = math.log1p(known_change) / 2.0
    c = verdict.comparison
    if (
        c.pairs == 0
        or not c.reaches_level
        or math.isnan(c.decision_low)
        or math.isnan(c.decision_high)
    ):
        return None
    if math.log1p(c.decision_high) < midpoint:
        return "slow"
    if math.log1p(c.decision_low) > midpoint:
        return "fast"
    return None
