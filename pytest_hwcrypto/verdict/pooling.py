"""Grouping measurements and pooling repeats: what every comparison starts from (pure).

Both `hwcrypto compare` (verdict/compare.py) and the profile rules (verdict/rules/) group
measurements by a key, pool repeated measurements of one key into one sample set, and let
the fastest driver stand for a group.  They do it here, once, so that a file compared on
the command line and the same data judged by a rule pick the same driver and the same
statistics.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Sequence
from dataclasses import dataclass
from typing import Optional, TypeVar

from pytest_hwcrypto.model.results import Measurement
from pytest_hwcrypto.model.stats import SampleStats

_Key = TypeVar("_Key", bound=Hashable)

# (source, algorithm, key_bits, block_size, op): a measured path; the driver is what differs
PathKey = tuple[str, str, Optional[int], Optional[int], str]
# the path plus the driver that served it: what a regression comparison matches on
MatchKey = tuple[str, str, Optional[int], Optional[int], str, Optional[str]]


def path_key(measurement: Measurement) -> PathKey:
    return (
        measurement.source,
        measurement.algorithm,
        measurement.key_bits,
        measurement.block_size,
        measurement.op,
    )


def match_key(measurement: Measurement) -> MatchKey:
    """The measured path plus the driver that served it."""
    return (*path_key(measurement), measurement.driver)


def group_by(
    measurements: Iterable[Measurement], key_of: Callable[[Measurement], _Key]
) -> dict[_Key, list[Measurement]]:
    """Measurements per key, keys in the order first seen (messages list series that way)."""
    grouped: dict[_Key, list[Measurement]] = {}
    for measurement in measurements:
        grouped.setdefault(key_of(measurement), []).append(measurement)
    return grouped


def pooled_stats(measurements: Sequence[Measurement]) -> SampleStats:
    """One measurement's own statistics, or the pooled samples of several."""
    if len(measurements) == 1:
        return measurements[0].sample_stats()
    pooled: list[float] = []
    for measurement in measurements:
        pooled.extend(measurement.samples or [measurement.bytes_per_second])
    return SampleStats.from_samples(pooled)


def pooled_by_key(
    measurements: Iterable[Measurement], key_of: Callable[[Measurement], _Key]
) -> dict[_Key, SampleStats]:
    """Statistics per key, pooling repeated measurements of one key into one sample set."""
    return {key: pooled_stats(group) for key, group in group_by(measurements, key_of).items()}


@dataclass(frozen=True)
class DriverStats:
    """One driver's measurements in a group, pooled."""

    driver: str | None
    members: Sequence[Measurement]
    stats: SampleStats


def fastest_driver(measurements: Iterable[Measurement]) -> DriverStats | None:
    """The driver with the highest pooled median, the first one seen on a tie; None if empty.

    The median, not an interval bound: this only picks who stands for a side, and the
    verdict on that side is then taken on its interval.
    """
    fastest: DriverStats | None = None
    for driver, members in group_by(measurements, lambda m: m.driver).items():
        stats = pooled_stats(members)
        if fastest is None or stats.median > fastest.stats.median:
            fastest = DriverStats(driver, members, stats)
    return fastest
