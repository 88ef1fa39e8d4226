# SPDX-License-Identifier: MIT
"""storage-bound (pure): when the storage, not the cipher, set the speed.

Then comparing drivers through that storage says nothing about the drivers (the Kirkwood
NAS case: fio identical with and without the engine, disk at 100 % util). Two ways to
know it:

* `storage_bound_findings`: a dm-crypt volume against the bare device under it, measured
  in the same boot, per op and block size: the volume's 95 % interval of the median
  reaches the bare device's, i.e. it is not clearly slower;
* `storage_bound_by_group`: the same per group of measurements (a fio workload, an I/O
  depth), each volume compared only with the bare device measured under that group;
* `storage_bound_pair`: two runs compared by `hwcrypto compare` (either mode), from
  whatever files: both carry the utilisation of the storage under them
  (`extra["storage_util"]`, put there by the fio parsers), both were at least
  `STORAGE_UTIL` % busy, and they ran equally fast (within fio's own noise, the same
  rule as the `storage-bound` finding of a parsed post, parsers/findings.py).
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TypeVar

from pytest_hwcrypto.model.results import Finding, Measurement
from pytest_hwcrypto.parsers.findings import STORAGE_UTIL, equal_within_noise
from pytest_hwcrypto.units import format_mib_s
from pytest_hwcrypto.vocabulary import FindingKind

# A group's key: an I/O depth or a workload's label
GroupKey = TypeVar("GroupKey", int, str)


@dataclass(frozen=True)
class StorageBound:
    """Why a pair of runs is storage-bound: how busy each side's storage was."""

    baseline_util: float
    current_util: float
    baseline_device: str | None = None
    current_device: str | None = None

    def describe(self) -> str:
        """'storage 98.2 % (dm-0) and 98.7 % (dm-0) busy, equally fast'."""
        return (
            f"storage {self.baseline_util:.1f} %{_named(self.baseline_device)} and "
            f"{self.current_util:.1f} %{_named(self.current_device)} busy, equally fast: "
            "the disk set the speed, not the cipher"
        )


def _named(device: str | None) -> str:
    return f" ({device})" if device else ""


def storage_bound_pair(
    baseline: Sequence[Measurement], current: Sequence[Measurement]
) -> StorageBound | None:
    """The two sides of a comparison were decided by their storage, or None.

    Each side is the measurements pooled for it; every one of them must say how busy its
    storage was, and the least busy must still be at least `STORAGE_UTIL` %.
    """
    side_a, side_b = _side(baseline), _side(current)
    if side_a is None or side_b is None:
        return None
    (rate_a, stdev_a, util_a, device_a), (rate_b, stdev_b, util_b, device_b) = side_a, side_b
    if min(util_a, util_b) < STORAGE_UTIL:
        return None
    if not equal_within_noise((rate_a, stdev_a), (rate_b, stdev_b)):
        return None
    return StorageBound(util_a, util_b, device_a, device_b)


def _side(
    measurements: Sequence[Measurement],
) -> tuple[float, float | None, float, str | None] | None:
    """Median rate, noise (fio's bandwidth stdev, if every run states it), least util."""
    utils = [_number(m.extra.get("storage_util")) for m in measurements]
    if not measurements or any(util is None for util in utils):
        return None
    stdevs = [_number(m.extra.get("bw_stdev")) for m in measurements]
    noise = max(s for s in stdevs if s is not None) if None not in stdevs else None
    least = min(range(len(measurements)), key=lambda index: utils[index] or 0.0)
    device = measurements[least].extra.get("storage_device")
    return (
        statistics.median(m.bytes_per_second for m in measurements),
        noise,
        utils[least] or 0.0,
        device if isinstance(device, str) else None,
    )


def _number(value: object) -> float | None:
    if isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value):
        return float(value)
    return None


def _low(m: Measurement) -> float:
    return m.ci_low if m.ci_low is not None else m.bytes_per_second


def _high(m: Measurement) -> float:
    return m.ci_high if m.ci_high is not None else m.bytes_per_second


def _words(m: Measurement) -> str:
    spread = f" [{format_mib_s(_low(m))}, {format_mib_s(_high(m))}]" if m.ci_low else ""
    return f"{format_mib_s(m.bytes_per_second)} MiB/s{spread}"


def storage_bound_findings(
    volumes: Sequence[Measurement], bare: Sequence[Measurement]
) -> list[Finding]:
    """One finding per volume measurement within noise of the bare device's."""
    by_cell = {(m.op, m.block_size): m for m in bare}
    findings = []
    for volume in volumes:
        device = by_cell.get((volume.op, volume.block_size))
        if device is None or _high(volume) < _low(device):
            continue
        detail = (
            f"{volume.driver} {volume.op} at {volume.block_size} B through dm-crypt ran "
            f"{_words(volume)} against {_words(device)} on the bare device: not clearly "
            "slower, so the storage (or the per-request cost under it) sets the pace and "
            "this says nothing about the driver"
        )
        extra = {
            "driver": volume.driver,
            "source": str(volume.source),
            "op": volume.op,
            "block_size": volume.block_size,
            "ratio": volume.bytes_per_second / max(device.bytes_per_second, 1e-9),
        }
        findings.append(Finding(FindingKind.STORAGE_BOUND, volume.algorithm, detail, extra))
    return findings


def storage_bound_by_group(
    measured: Sequence[Measurement], bare_driver: str, group: Callable[[Measurement], GroupKey]
) -> list[tuple[GroupKey, list[Finding]]]:
    """`storage_bound_findings` within each group (in sorted order), never across groups.

    A volume at iodepth 16 against the bare device at iodepth 1 (or a random-write
    workload against a sequential-read one) would compare two different storages.
    """
    grouped: dict[GroupKey, list[Measurement]] = {}
    for measurement in measured:
        grouped.setdefault(group(measurement), []).append(measurement)
    result = []
    for key in sorted(grouped):
        same = grouped[key]
        volumes = [m for m in same if m.driver != bare_driver]
        bare = [m for m in same if m.driver == bare_driver]
        result.append((key, storage_bound_findings(volumes, bare)))
    return result
