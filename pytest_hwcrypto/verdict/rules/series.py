# SPDX-License-Identifier: MIT
"""Which measurements are compared with which: series per group, the driver for each side.

Measurements are grouped by (source, key_bits, op), so a rule never compares a 128-bit
decrypt with a 256-bit encrypt, and within a group by block size.  At each size the
fastest driver matching a side (a class or a driver name) stands for it; the same choice
is made for the winner's rivals and for `hwcrypto compare`'s files (verdict/pooling.py).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from types import MappingProxyType

from pytest_hwcrypto.model.results import Measurement
from pytest_hwcrypto.model.stats import RatioInterval, ratio_interval
from pytest_hwcrypto.verdict.crossover import crossover
from pytest_hwcrypto.verdict.pooling import (
    fastest_driver,
    group_by,
    pooled_stats,
    same_rounds_interval,
)
from pytest_hwcrypto.verdict.rules.model import (
    Candidate,
    GroupKey,
    Inventory,
    PairPoint,
    Scope,
    Winner,
)
from pytest_hwcrypto.vocabulary import HARDWARE_CLASSES, PROFILE_DRIVER_CLASSES, DriverClass

_NO_CLASSES: Mapping[str, str] = MappingProxyType({})

# (faster-path classes, slower-path classes) compared by the findings. Against an offload
# engine the CPU's own crypto instructions are a software path too: virtio-crypto against
# aesni on the QEMU board, CESA against NEON on a Marvell board.
HW_SW_CLASS_PAIRS: tuple[tuple[tuple[DriverClass, ...], tuple[DriverClass, ...]], ...] = (
    (HARDWARE_CLASSES, (DriverClass.GENERIC,)),
    ((DriverClass.OFFLOAD,), (DriverClass.CPU_ACCEL,)),
)

# (algorithm, group, hw words, sw words, points) of one hardware x software driver pair
HwSwPair = tuple[str, GroupKey, str, str, list[PairPoint]]

# ---------------------------------------------------------------------------------------
# inventory knowledge


def driver_classes(inventory: Inventory) -> dict[str, str]:
    """Driver name -> class, from the inventory entries that have one."""
    return {
        entry.driver: entry.driver_class
        for entry in inventory
        if entry.driver and entry.driver_class
    }


def class_of(measurement: Measurement, classes: Mapping[str, str]) -> str | None:
    if measurement.driver_class:
        return measurement.driver_class
    return classes.get(measurement.driver or "")


def recorded_winner(algorithm: str, inventory: Inventory) -> Winner | None:
    """The driver the kernel hands out for `algorithm`: the flagged winner, else top priority."""
    entries = [entry for entry in inventory if entry.name == algorithm and entry.driver]
    flagged = [entry for entry in entries if entry.winner is True]
    chosen = flagged or sorted(entries, key=lambda entry: entry.priority or 0, reverse=True)[:1]
    if not chosen or chosen[0].driver is None:
        return None
    return Winner(driver=chosen[0].driver, priority=chosen[0].priority)


# ---------------------------------------------------------------------------------------
# picking candidates


def best_candidate(
    measurements: Sequence[Measurement],
    side: str | None,
    classes: Mapping[str, str] = _NO_CLASSES,
) -> Candidate | None:
    """The fastest (median) driver matching `side`: a class name, else a driver name; any
    driver when `side` is None (the winner's fastest rival)."""
    if side is None:
        matching: Sequence[Measurement] = measurements
    elif side in PROFILE_DRIVER_CLASSES:
        matching = [m for m in measurements if class_of(m, classes) == side]
    else:
        matching = [m for m in measurements if m.driver == side]
    fastest = fastest_driver(matching)
    if fastest is None:
        return None
    return Candidate(
        fastest.driver or "",
        class_of(fastest.members[0], classes),
        fastest.stats,
        tuple(fastest.members),
    )


def missing_side(
    measurements: Sequence[Measurement],
    scope: Scope,
    classes: Mapping[str, str],
    sides: Sequence[str],
) -> str | None:
    """The first side with no measurement at all in scope (any block size), else None."""
    in_scope = [m for m in measurements if m.driver is not None and scope.admits_path(m)]
    for side in sides:
        if best_candidate(in_scope, side, classes) is None:
            return side
    return None


# ---------------------------------------------------------------------------------------
# building series


def grouped_by_size(
    measurements: Iterable[Measurement], scope: Scope
) -> dict[GroupKey, dict[int | None, list[Measurement]]]:
    """Measurements with a driver, in scope except for block size, by group then by size."""
    in_scope = [m for m in measurements if m.driver is not None and scope.admits_path(m)]
    return {
        group: group_by(members, lambda m: m.block_size)
        for group, members in group_by(
            in_scope, lambda m: (m.source, m.key_bits, m.op, m.level)
        ).items()
    }


def floor_points(
    measurements: Sequence[Measurement], scope: Scope, classes: Mapping[str, str], target: str
) -> list[tuple[GroupKey, int | None, Candidate]]:
    """(group, size, best driver for `target`) at every size in range where one was measured."""
    points = []
    for group, by_size in grouped_by_size(measurements, scope).items():
        for size in sorted(by_size, key=_size_order):
            candidate = best_candidate(by_size[size], target, classes)
            if candidate is not None and scope.block_sizes.contains(size):
                points.append((group, size, candidate))
    return points


def pair_interval(first: Candidate, second: Candidate) -> RatioInterval:
    """first / second: from per-round quotients when both were measured in the same rounds
    (verdict/pooling.py, same_rounds_interval), else bounded by their two intervals."""
    paired = same_rounds_interval(first.members, second.members)
    return paired if paired is not None else ratio_interval(first.stats, second.stats)


def pair_series(
    measurements: Sequence[Measurement],
    scope: Scope,
    classes: Mapping[str, str],
    first: str,
    second: str,
) -> dict[GroupKey, list[PairPoint]]:
    """Per group, `first` against `second` at every size where both were measured."""
    series: dict[GroupKey, list[PairPoint]] = {}
    for group, by_size in grouped_by_size(measurements, scope).items():
        points = []
        for size in sorted(by_size, key=_size_order):
            one = best_candidate(by_size[size], first, classes)
            other = best_candidate(by_size[size], second, classes)
            if one is not None and other is not None:
                points.append(PairPoint(size, one, other, pair_interval(one, other)))
        series[group] = points
    return series


def winner_series(
    measurements: Sequence[Measurement],
    scope: Scope,
    winner: Winner,
    classes: Mapping[str, str] = _NO_CLASSES,
) -> dict[GroupKey, list[PairPoint]] | None:
    """Per group and size in range: the winner against the fastest other measured driver;
    None when the winner was not measured at all."""
    series: dict[GroupKey, list[PairPoint]] = {}
    winner_seen = False
    for group, by_size in grouped_by_size(measurements, scope).items():
        points = []
        for size in sorted(by_size, key=_size_order):
            if not scope.block_sizes.contains(size):
                continue
            own = [m for m in by_size[size] if m.driver == winner.driver]
            others = [m for m in by_size[size] if m.driver != winner.driver]
            winner_seen = winner_seen or bool(own)
            fastest = best_candidate(others, None, classes)
            if own and fastest is not None:
                mine = Candidate(
                    winner.driver, class_of(own[0], classes), pooled_stats(own), tuple(own)
                )
                points.append(PairPoint(size, mine, fastest, pair_interval(mine, fastest)))
        series[group] = points
    return series if winner_seen else None


def hw_sw_pairs(measurements: Sequence[Measurement], inventory: Inventory) -> list[HwSwPair]:
    """(algorithm, group, hw words, sw words, points) for each hardware x software driver
    pair: hardware x generic, and offload x cpu-accel."""
    classes = driver_classes(inventory)
    pairs = []
    for algorithm in algorithms_with_drivers(measurements):
        scope = Scope(algorithm)
        for group, by_size in grouped_by_size(measurements, scope).items():
            members = [m for at_size in by_size.values() for m in at_size]
            for hw_classes, sw_classes in HW_SW_CLASS_PAIRS:
                for hw_driver in _drivers_of(members, classes, hw_classes):
                    for sw_driver in _drivers_of(members, classes, sw_classes):
                        points = pair_series(members, scope, classes, hw_driver, sw_driver).get(
                            group, []
                        )
                        if points:
                            hw_words = f"{points[0].first.driver_class} {hw_driver}"
                            sw_class = points[0].second.driver_class or sw_classes[0]
                            sw_words = f"{sw_class} {sw_driver}"
                            pairs.append((algorithm, group, hw_words, sw_words, points))
    return pairs


def algorithms_with_drivers(measurements: Sequence[Measurement]) -> list[str]:
    return list(dict.fromkeys(m.algorithm for m in measurements if m.driver is not None))


def series_crossover(points: Sequence[PairPoint], min_ratio: float) -> int | None:
    """The crossover of one series (verdict/crossover.py) on its points' median ratios."""
    ratios = {
        point.block_size: point.interval.ratio for point in points if point.block_size is not None
    }
    return crossover(ratios, min_ratio)


def _drivers_of(
    members: Sequence[Measurement], classes: Mapping[str, str], wanted: Sequence[str]
) -> list[str]:
    found: dict[str, None] = {}
    for measurement in members:
        if measurement.driver and class_of(measurement, classes) in wanted:
            found[measurement.driver] = None
    return list(found)


def _size_order(size: int | None) -> int:
    return -1 if size is None else size
