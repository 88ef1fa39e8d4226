# SPDX-License-Identifier: MIT
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

from pytest_hwcrypto.model.results import ROUNDS_KEY, Measurement
from pytest_hwcrypto.model.stats import RatioInterval, SampleStats

_Key = TypeVar("_Key", bound=Hashable)

# (source, algorithm, key_bits, block_size, op, requests in flight): a measured path; the
# driver is what differs. A driver at N=4 is a different path from the same driver at N=1.
PathKey = tuple[str, str, Optional[int], Optional[int], str, int]
# the path plus the driver that served it: what a regression comparison matches on
MatchKey = tuple[str, str, Optional[int], Optional[int], str, int, Optional[str]]


def path_key(measurement: Measurement) -> PathKey:
    return (
        measurement.source,
        measurement.algorithm,
        measurement.key_bits,
        measurement.block_size,
        measurement.op,
        measurement.level,
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


def round_quotients(measurement: Measurement, reference: Measurement) -> list[float]:
    """Sample i of `measurement` over sample i of `reference`, skipping a zero reference."""
    pairs = zip(measurement.samples, reference.samples)
    return [value / base for value, base in pairs if base > 0]


def same_rounds_interval(
    first: Sequence[Measurement], second: Sequence[Measurement]
) -> RatioInterval | None:
    """first / second from per-round quotients, when each side is one measurement and both
    were sampled in the same rounds (the same `rounds_id`, as many samples); else None.

    Why: on a board whose speed drifts (UML on a shared 2-vCPU host moved 2x between
    0.1 s samples, tests/board/test_throughput_engine.py) two independent intervals are
    each wide, and bounding their ratio by ci_low / ci_high of the other is wider still: a
    driver clearly half as fast could not be told from an equal one. A round's two samples
    were taken next to each other, so the drift that slowed one slowed the other, and it
    cancels in their quotient.
    Pooled repeats (several measurements a side) come from different runs: no pairing.
    """
    if len(first) != 1 or len(second) != 1:
        return None
    one, other = first[0], second[0]
    rounds = one.extra.get(ROUNDS_KEY)
    if rounds is None or rounds != other.extra.get(ROUNDS_KEY):
        return None
    if not one.samples or len(one.samples) != len(other.samples):
        return None
    quotients = round_quotients(one, other)
    if len(quotients) != len(one.samples):  # a reference sample of 0 bytes/s: no quotient
        return None
    stats = SampleStats.from_samples(quotients)
    return RatioInterval(ratio=stats.median, low=stats.ci_low, high=stats.ci_high)
