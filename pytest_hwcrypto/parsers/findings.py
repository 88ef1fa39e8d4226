# SPDX-License-Identifier: MIT
"""Findings a pasted post supports on its own, without a kernel (pure: Tables in).

* ``cpu-time-not-elapsed`` -- an openssl run names an engine but times without
  ``-elapsed``.  openssl then divides by its own user CPU time, which leaves out the time
  the engine (the kernel, a device) works, so the rates come out too high: in the UML
  recording here, afalg at 16 KiB read 407859k with CPU time and 124846k elapsed.
* ``legacy-bypasses-engine`` -- an engine is named but the run used legacy cipher names
  (no ``-evp``).  When the post also holds the same legacy run without the engine, the
  numbers decide: the same within `SAME_SPEED` means the engine did not do the work.
  Without such a pair the version decides: OpenSSL 1.x runs legacy names on its built-in
  code, bypassing engines; OpenSSL 3.x sends them through EVP, where the engine can serve
  them (it did in the recording: 567k vs 1190581k at 16 B), so 3.x alone is no finding.
* ``storage-bound`` -- two fio runs of the same workload are equal within their own
  noise (the stdev of fio's bandwidth samples) while a disk under the volume was at least
  `STORAGE_UTIL` % busy in both: the disk set the speed, so the runs say nothing about
  the cipher.  The first disk fio lists is the device it wrote to (the dm-crypt volume,
  busy whenever I/O is queued on it); the ones after it lie under it.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from itertools import combinations

from pytest_hwcrypto.model.results import Finding
from pytest_hwcrypto.parsers.fio import busiest_under_volume
from pytest_hwcrypto.parsers.tables import Table
from pytest_hwcrypto.vocabulary import FindingKind

STORAGE_UTIL = 95.0
# "the same speed": every block size within 30 %, and their geometric mean within 15 %
SAME_SPEED = (1.30, 1.15)
# with no stated noise, fio runs within this fraction of each other are equal
FIO_EQUAL_WITHOUT_NOISE = 0.05

_Key = tuple[str, str, "int | None"]


def find(tables: Sequence[Table]) -> list[Finding]:
    """Every finding the tables support, in table order."""
    openssl = [table for table in tables if table.tool == "openssl"]
    fio = [table for table in tables if table.tool == "fio"]
    found: list[Finding] = []
    for table in openssl:
        found.extend(_cpu_time(table))
        found.extend(_legacy_bypass(table, openssl))
    found.extend(_storage_bound(fio))
    return found


def _where(table: Table) -> str:
    return f"openssl table {table.index}" + (f" ({table.label})" if table.label else "")


def _algorithms(table: Table) -> str:
    return ", ".join(dict.fromkeys(m.algorithm for m in table.measurements)) or "openssl"


def _cpu_time(table: Table) -> list[Finding]:
    engine = table.facts.get("engine")
    if not engine or table.facts.get("elapsed") is not False:
        return []
    detail = (
        f"{_where(table)}: engine {engine} timed without -elapsed: openssl divides by its "
        "own user CPU time, which leaves out the time the engine works, so these rates are "
        "too high; rerun with -elapsed"
    )
    timed = table.facts.get("timed_seconds")
    seconds = table.facts.get("seconds")
    if isinstance(timed, list) and timed and isinstance(seconds, int) and timed[0] < seconds:
        detail += f" (its runs counted {timed[0]:.2f} s of CPU time in {seconds} s)"
    return [
        Finding(
            str(FindingKind.CPU_TIME_NOT_ELAPSED),
            _algorithms(table),
            detail,
            extra={"table": table.index, "engine": engine},
        )
    ]


def _legacy_bypass(table: Table, openssl: Sequence[Table]) -> list[Finding]:
    engine = table.facts.get("engine")
    if not engine or table.facts.get("evp") is not False or not table.measurements:
        return []
    own = _rates(table)
    references = [
        other
        for other in openssl
        if other is not table
        and not other.facts.get("engine")
        and other.facts.get("evp") is not True
        and own.keys() & _rates(other).keys()
    ]
    extra: dict[str, object] = {"table": table.index, "engine": engine}
    if references:
        reference = max(references, key=lambda other: len(own.keys() & _rates(other).keys()))
        theirs = _rates(reference)
        ratios = [own[key] / theirs[key] for key in own.keys() & theirs.keys() if theirs[key]]
        if not ratios or not _same_speed(ratios):
            return []  # the engine changed the numbers: it did serve these names
        extra["compared_with"] = reference.index
        detail = (
            f"{_where(table)}: engine {engine} named, but without -evp its speeds are those "
            f"of table {reference.index} without the engine ({min(ratios):.2f}x to "
            f"{max(ratios):.2f}x over {len(ratios)} block sizes): the engine did not serve "
            "these legacy cipher names; rerun with -evp"
        )
    else:
        version = table.facts.get("version")
        if isinstance(version, str) and not version.startswith(("0.", "1.")):
            return []
        detail = (
            f"{_where(table)}: engine {engine} named, but the run used legacy cipher names "
            "(no -evp): OpenSSL 1.x runs those on its built-in code, bypassing the engine, so "
            "this table shows software speed; rerun with -evp"
        )
        if version is None:
            detail += " (the paste does not say which OpenSSL; 3.x sends them through EVP)"
    return [
        Finding(str(FindingKind.LEGACY_BYPASSES_ENGINE), _algorithms(table), detail, extra=extra)
    ]


def _rates(table: Table) -> dict[tuple[str, int | None], float]:
    return {(m.algorithm, m.block_size): m.bytes_per_second for m in table.measurements}


def _same_speed(ratios: Sequence[float]) -> bool:
    each, overall = SAME_SPEED
    if any(ratio <= 0 or not 1 / each <= ratio <= each for ratio in ratios):
        return False
    mean = math.exp(sum(math.log(ratio) for ratio in ratios) / len(ratios))
    return 1 / overall <= mean <= overall


def _storage_bound(tables: Sequence[Table]) -> list[Finding]:
    found = []
    for first, second in combinations(tables, 2):
        rates_a, rates_b = _fio_rates(first), _fio_rates(second)
        if not rates_a or rates_a.keys() != rates_b.keys():
            continue
        disk_a, disk_b = busiest_under_volume(first), busiest_under_volume(second)
        if disk_a is None or disk_b is None:
            continue
        if min(disk_a.util, disk_b.util) < STORAGE_UTIL:
            continue
        if not all(equal_within_noise(rates_a[key], rates_b[key]) for key in rates_a):
            continue
        numbers = "; ".join(
            f"{key[0]} {key[1]} {_kib(rates_a[key][0])} vs {_kib(rates_b[key][0])} KiB/s"
            for key in rates_a
        )
        detail = (
            f"fio tables {first.index} and {second.index}: {numbers}, equal within the runs' "
            f"own noise, while {disk_a.name} under the volume was {disk_a.util:.1f} % and "
            f"{disk_b.name} {disk_b.util:.1f} % busy: the storage, not the cipher, set these "
            "numbers, so comparing the runs says nothing about the cipher"
        )
        found.append(
            Finding(
                str(FindingKind.STORAGE_BOUND),
                ", ".join(dict.fromkeys(job for job, _, _ in rates_a)),
                detail,
                extra={
                    "tables": [first.index, second.index],
                    "disks": [disk_a.name, disk_b.name],
                    "util": [disk_a.util, disk_b.util],
                },
            )
        )
    return found


def _fio_rates(table: Table) -> dict[_Key, tuple[float, float | None]]:
    """Per (job, op, block size): the summed rate and the stdev of the sum, if stated."""
    rates: dict[_Key, float] = {}
    variances: dict[_Key, float | None] = {}
    for measurement in table.measurements:
        key = (measurement.algorithm, measurement.op, measurement.block_size)
        rates[key] = rates.get(key, 0.0) + measurement.bytes_per_second
        stdev = measurement.extra.get("bw_stdev")
        previous = variances.get(key, 0.0)
        if isinstance(stdev, (int, float)) and not isinstance(stdev, bool) and previous is not None:
            variances[key] = previous + float(stdev) ** 2
        else:
            variances[key] = None  # one job without a stated noise: the sum has none
    return {
        key: (rate, None if variances[key] is None else math.sqrt(variances[key] or 0.0))
        for key, rate in rates.items()
    }


def equal_within_noise(a: tuple[float, float | None], b: tuple[float, float | None]) -> bool:
    """Two fio rates (bytes/s, stdev of fio's bandwidth samples or None) the same speed."""
    (rate_a, stdev_a), (rate_b, stdev_b) = a, b
    if stdev_a is not None and stdev_b is not None:
        return abs(rate_a - rate_b) <= max(stdev_a, stdev_b)
    return abs(rate_a - rate_b) <= FIO_EQUAL_WITHOUT_NOISE * max(rate_a, rate_b)


def _kib(rate: float) -> str:
    return f"{rate / 1024:.0f}"
