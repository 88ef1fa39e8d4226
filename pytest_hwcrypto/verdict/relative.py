# SPDX-License-Identifier: MIT
"""Throughput relative to a reference driver measured in the same run (pure).

Why: on a shared CI host or a lab board whose clock moves, two runs of an unchanged
kernel can differ by tens of percent (benchmarks/aa-stability-sensitivity.md measured up
to 2x between back-to-back runs under TCG), because the whole machine was faster or slower, not one
driver.  The throughput engine measures every driver of one comparison in the same rounds,
next to each other (measure/plan.py), so whatever slowed the machine during a round slowed
the reference driver too.  Dividing each sample of a driver by the reference's sample of
the same round cancels that, and leaves what a regression verdict is after: this driver
got slower *compared with the software the same kernel also has*.

A relative measurement keeps the path (source, algorithm, key size, block size, op) and
driver of the original; its samples are those per-round quotients, so `hwcrypto compare`
and the no-regression rule judge it exactly as they judge bytes/s.  It cannot see a
regression that slows the reference just as much (a slower memcpy, a slower syscall path):
that is what the absolute comparison is for, and why relative is an option, not the default.
"""

from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence
from dataclasses import replace

from pytest_hwcrypto.model.results import ROUNDS_KEY, Measurement
from pytest_hwcrypto.verdict.pooling import (
    PathKey,
    fastest_driver,
    group_by,
    path_key,
    round_quotients,
)
from pytest_hwcrypto.vocabulary import DriverClass

# `relative_to = "software"`: the fastest generic-class driver of the same path stands for
# software, as it does on the software side of hw-beats-sw.
SOFTWARE_REFERENCE = "software"
RELATIVE_TO_KEY = "relative_to"  # Measurement.extra: the reference driver's name


def resolve_references(baseline: Sequence[Measurement], reference: str) -> dict[PathKey, str]:
    """The reference driver of each path, decided once from the baseline.

    A driver name stands for itself on every path that measured it. "software" is the
    fastest generic-class driver of the path *in the baseline*, and the current run is
    then divided by that same driver, even where another generic driver is faster now:
    a reference that changed between the runs would make the quotients incomparable.
    """
    chosen: dict[PathKey, str] = {}
    for key, members in group_by(baseline, path_key).items():
        if reference != SOFTWARE_REFERENCE:
            if any(m.driver == reference for m in members):
                chosen[key] = reference
            continue
        fastest = fastest_driver(m for m in members if m.driver_class == DriverClass.GENERIC)
        if fastest is not None and fastest.driver is not None:
            chosen[key] = fastest.driver
    return chosen


def relative_measurements(
    measurements: Sequence[Measurement], references: Mapping[PathKey, str]
) -> list[Measurement]:
    """Each measurement on a path with a reference, as a quotient of same-round samples.

    The reference itself, and measurements whose path has no reference (or did not
    measure it in this file), are left out: they cannot be relative to it.
    """
    relative: list[Measurement] = []
    for key, members in group_by(measurements, path_key).items():
        driver = references.get(key)
        partners = [(i, m) for i, m in enumerate(members) if m.driver == driver]
        if driver is None or not partners:
            continue
        for position, measurement in enumerate(members):
            if measurement.driver != driver:
                partner = _same_run_partner(position, measurement, partners)
                relative.append(_quotient(measurement, partner))
    return relative


def _same_run_partner(
    position: int, measurement: Measurement, partners: Sequence[tuple[int, Measurement]]
) -> Measurement:
    """The reference measured in the same rounds: the same `rounds_id` when the run named
    them, else the same sample count, nearest in the file.

    A results file lists the cells of one plan together, so without the id the nearest
    reference with as many samples is the one interleaved with this measurement; a file that
    repeats a run (pooled later) holds one such pair per run. Positions are indexes on the
    path.
    """
    rounds = measurement.extra.get(ROUNDS_KEY)

    def distance(partner: tuple[int, Measurement]) -> tuple[bool, bool, int]:
        where, candidate = partner
        return (
            rounds is not None and candidate.extra.get(ROUNDS_KEY) != rounds,
            len(candidate.samples) != len(measurement.samples),
            abs(where - position),
        )

    return min(partners, key=distance)[1]


def _quotient(measurement: Measurement, reference: Measurement) -> Measurement:
    """Per-round quotients when both have samples, else the quotient of the headline values."""
    samples = round_quotients(measurement, reference)
    if samples:
        headline = statistics.median(samples)
    elif reference.bytes_per_second > 0:
        headline = measurement.bytes_per_second / reference.bytes_per_second
    else:  # a reference that moved no bytes: nothing to be relative to
        headline = 0.0
    return replace(
        measurement,
        bytes_per_second=headline,
        samples=samples,
        # an interval in bytes/s means nothing as a ratio; drop it rather than mix units
        ci_low=None,
        ci_high=None,
        cov=None,
        cpu_seconds=None,
        bytes_per_cpu_second=None,
        extra={**measurement.extra, RELATIVE_TO_KEY: reference.driver},
    )


__all__ = [
    "RELATIVE_TO_KEY",
    "SOFTWARE_REFERENCE",
    "relative_measurements",
    "resolve_references",
]
