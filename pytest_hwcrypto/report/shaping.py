# SPDX-License-Identifier: MIT
"""What a report shows, as plain data (pure: Results in, panels and rows out).

`hwcrypto report` and `--hwcrypto-html` draw and write what this module decides, so the
decisions (which measurements form a curve, which driver is hardware, where the crossover
is, how several files are told apart) are unit-tested without matplotlib or HTML.

* A **panel** is one comparable series family: (source, algorithm, key size, op) with a
  block size.  Each curve in it is one driver of one file; with several files each curve
  carries the file's label (its board and kernel), so kernel A vs B or board X vs Y sit on
  the same axes.
* The **HW/SW ratio** of a panel, per file: every non-generic driver (cpu-accel, offload)
  against the fastest generic driver at each block size, and its crossover
  (verdict/crossover.py: HW >= 1x SW from that size on).
* Measurements without a block size (cryptsetup's benchmark table, other tools' totals)
  become **bars**: one group per source, one bar per (algorithm, key size, op) and file.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional

from pytest_hwcrypto.model.results import Measurement, Results
from pytest_hwcrypto.verdict.crossover import crossover
from pytest_hwcrypto.verdict.pooling import group_by, pooled_stats
from pytest_hwcrypto.vocabulary import DEFAULT_MIN_RATIO, DriverClass

# (source, algorithm, key_bits, op): what one panel holds
# source, algorithm, key_bits, op, requests in flight: one panel per level, so a run
# measured at N = 1, 4, 16 shows how each driver scales panel by panel
PanelKey = tuple[str, str, Optional[int], str, int]


@dataclass(frozen=True)
class ReportInput:
    """One results file and the label its series carry."""

    label: str
    path: str
    results: Results


@dataclass(frozen=True)
class Point:
    """Median throughput at one block size, with its interval (bytes/s)."""

    block_size: int
    median: float
    low: float
    high: float
    n: int


@dataclass(frozen=True)
class Curve:
    file_label: str
    driver: str
    driver_class: str
    points: tuple[Point, ...]

    def label(self, several_files: bool) -> str:
        own = f"{self.driver} ({self.driver_class})"
        return f"{self.file_label}: {own}" if several_files else own


@dataclass(frozen=True)
class RatioCurve:
    """HW/SW ratio of one hardware driver against the fastest generic one, per block size."""

    file_label: str
    hw_driver: str
    hw_class: str
    ratios: tuple[tuple[int, float], ...]
    sw_drivers: tuple[str, ...]
    crossover: int | None

    def label(self, several_files: bool) -> str:
        own = f"{self.hw_driver} ({self.hw_class}) / fastest generic"
        return f"{self.file_label}: {own}" if several_files else own


@dataclass(frozen=True)
class Panel:
    key: PanelKey
    curves: tuple[Curve, ...]
    ratios: tuple[RatioCurve, ...]

    @property
    def title(self) -> str:
        source, algorithm, key_bits, op, level = self.key
        bits = f" {key_bits}-bit" if key_bits is not None else ""
        depth = f", {level} requests in flight" if level != 1 else ""
        return f"{algorithm}{bits} {op} ({source}{depth})"

    @property
    def block_sizes(self) -> tuple[int, ...]:
        return tuple(sorted({p.block_size for c in self.curves for p in c.points}))


@dataclass(frozen=True)
class Bar:
    file_label: str
    name: str  # algorithm, key size and op
    driver: str | None
    bytes_per_second: float


@dataclass(frozen=True)
class BarGroup:
    source: str
    bars: tuple[Bar, ...]


@dataclass(frozen=True)
class ReportData:
    inputs: tuple[ReportInput, ...]
    panels: tuple[Panel, ...]
    bar_groups: tuple[BarGroup, ...]
    several_files: bool = field(default=False)


def file_labels(documents: Sequence[tuple[str, Results]]) -> list[str]:
    """A short label per file: board kind and kernel release, else the file's name.

    Labels that would repeat (two runs on one board and kernel) get the file name added,
    so every series stays told apart.
    """
    base = [_environment_label(results) or Path(path).stem for path, results in documents]
    labels = []
    for (path, _), label in zip(documents, base):
        if base.count(label) > 1 and label != Path(path).stem:
            label = f"{label} [{Path(path).name}]"
        labels.append(label)
    # still equal (same file name in two directories): number them
    return [
        f"{label} #{i + 1}" if labels.count(label) > 1 else label for i, label in enumerate(labels)
    ]


def _environment_label(results: Results) -> str:
    board = results.extra.get("board")
    kind = board.get("kind") if isinstance(board, Mapping) else None
    release = results.kernel.get("release")
    parts = [str(part) for part in (kind, release) if part]
    return " ".join(parts)


def shape(inputs: Sequence[ReportInput], min_ratio: float = DEFAULT_MIN_RATIO) -> ReportData:
    """Panels (block-size series) and bar groups (no block size) over all files, in order."""
    curves: dict[PanelKey, list[Curve]] = {}
    ratios: dict[PanelKey, list[RatioCurve]] = {}
    bars: dict[str, list[Bar]] = {}
    series_count = 0
    for item in inputs:
        classes = _inventory_classes(item.results.inventory)
        for label, measurements in series_of(item):
            series_count += 1
            sized = [m for m in measurements if m.block_size is not None]
            for key, members in group_by(sized, panel_key).items():
                file_curves = _curves(label, members, classes)
                curves.setdefault(key, []).extend(file_curves)
                ratios.setdefault(key, []).extend(_ratio_curves(label, file_curves, min_ratio))
            for measurement in measurements:
                if measurement.block_size is None:
                    bars.setdefault(measurement.source, []).append(_bar(label, measurement))
    panels = tuple(Panel(key, tuple(curves[key]), tuple(ratios[key])) for key in curves)
    groups = tuple(BarGroup(source, tuple(members)) for source, members in bars.items())
    return ReportData(tuple(inputs), panels, groups, several_files=series_count > 1)


def series_of(item: ReportInput) -> list[tuple[str, list[Measurement]]]:
    """A file's measurements, split by pasted table when `hwcrypto parse` found several.

    A post that pastes one tool's output for two kernels is two series, not one: pooling
    them would average the very difference the post is about.
    """
    tables = group_by(item.results.measurements, lambda m: m.extra.get("table"))
    if len(tables) <= 1:
        return [(item.label, list(item.results.measurements))]
    result = []
    for table, members in tables.items():
        name = members[0].extra.get("label") or f"table {table}"
        result.append((f"{item.label}: {name}", members))
    return result


def panel_key(measurement: Measurement) -> PanelKey:
    return (
        measurement.source,
        measurement.algorithm,
        measurement.key_bits,
        measurement.op,
        measurement.level,
    )


def driver_class_of(measurement: Measurement, classes: Mapping[str, str]) -> str:
    """The measurement's own class, else the inventory's, else unknown."""
    if measurement.driver_class:
        return measurement.driver_class
    return classes.get(measurement.driver or "", DriverClass.UNKNOWN.value)


def _inventory_classes(inventory: Sequence[Mapping[str, Any]]) -> dict[str, str]:
    return {
        str(entry["driver"]): str(entry["class"])
        for entry in inventory
        if entry.get("driver") and entry.get("class")
    }


def _curves(label: str, members: Sequence[Measurement], classes: Mapping[str, str]) -> list[Curve]:
    result = []
    for driver, of_driver in group_by(members, lambda m: m.driver).items():
        points = []
        for block_size, at_size in sorted(
            group_by(of_driver, lambda m: m.block_size).items(), key=lambda item: item[0] or 0
        ):
            stats = pooled_stats(at_size)
            points.append(
                Point(block_size or 0, stats.median, stats.ci_low, stats.ci_high, stats.n)
            )
        result.append(
            Curve(
                label,
                driver or "driver not named",
                driver_class_of(of_driver[0], classes),
                tuple(points),
            )
        )
    return result


def _ratio_curves(label: str, curves: Sequence[Curve], min_ratio: float) -> list[RatioCurve]:
    generic = [c for c in curves if c.driver_class == DriverClass.GENERIC.value]
    hardware = [
        c
        for c in curves
        if c.driver_class in (DriverClass.CPU_ACCEL.value, DriverClass.OFFLOAD.value)
    ]
    if not generic or not hardware:
        return []
    fastest_sw: dict[int, tuple[float, str]] = {}
    for curve in generic:
        for point in curve.points:
            best = fastest_sw.get(point.block_size)
            if best is None or point.median > best[0]:
                fastest_sw[point.block_size] = (point.median, curve.driver)
    result = []
    for curve in hardware:
        ratios = {
            p.block_size: p.median / fastest_sw[p.block_size][0]
            for p in curve.points
            if p.block_size in fastest_sw and fastest_sw[p.block_size][0] > 0
        }
        if not ratios:
            continue
        sw_drivers = tuple(dict.fromkeys(fastest_sw[size][1] for size in sorted(ratios)))
        result.append(
            RatioCurve(
                label,
                curve.driver,
                curve.driver_class,
                tuple(sorted(ratios.items())),
                sw_drivers,
                crossover(ratios, min_ratio),
            )
        )
    return result


def _bar(label: str, measurement: Measurement) -> Bar:
    bits = f" {measurement.key_bits}-bit" if measurement.key_bits is not None else ""
    return Bar(
        label,
        f"{measurement.algorithm}{bits} {measurement.op}",
        measurement.driver,
        measurement.bytes_per_second,
    )


def environment_rows(results: Results) -> list[tuple[str, str]]:
    """Key/value rows of what a file says about where it ran: kernel, board, environment,
    the pasted tool's facts; nested objects flattened with dotted keys."""
    rows: list[tuple[str, str]] = []
    _flatten("kernel", results.kernel, rows)
    for key in ("board", "environment"):
        if key in results.extra:
            _flatten(key, results.extra[key], rows)
    paste = results.extra.get("paste")
    if isinstance(paste, Mapping):
        for key in ("file", "tool"):
            if key in paste:
                _flatten(f"paste.{key}", paste[key], rows)
        tables = paste.get("tables")
        if isinstance(tables, list):
            for table in tables:
                if isinstance(table, Mapping):
                    prefix = f"paste.table[{table.get('table')}]"
                    _flatten(f"{prefix}.tool", table.get("tool"), rows)
                    _flatten(f"{prefix}.facts", table.get("facts"), rows)
    return rows


def _flatten(prefix: str, value: Any, rows: list[tuple[str, str]]) -> None:
    if value is None:
        return
    if isinstance(value, Mapping):
        for key, inner in value.items():
            _flatten(f"{prefix}.{key}", inner, rows)
    elif isinstance(value, list) and value and all(isinstance(v, Mapping) for v in value):
        for index, inner in enumerate(value):
            _flatten(f"{prefix}[{index}]", inner, rows)
    elif isinstance(value, list):
        rows.append((prefix, ", ".join(str(v) for v in value) or "(none)"))
    else:
        rows.append((prefix, str(value)))
