# SPDX-License-Identifier: MIT
"""Did OpenSSL's `-async_jobs N` really put N requests in flight? (pure)

OpenSSL has two ways to keep several requests in flight through its afalg engine: `-multi
N` forks N processes, each with its own sockets, so N requests wait in the kernel at once
whatever the kernel does with AIO; `-async_jobs N` runs N ASYNC jobs in one thread, each
submitting its request with io_submit and pausing until the kernel completes it. The second
way only works where the kernel completes AF_ALG's AIO asynchronously: kernels carrying the
stable change "crypto: algif_skcipher - force synchronous processing" (Debian 6.1.180 and
later, for instance) finish every request inside io_submit, so the jobs take turns and the
rate stays that of one request, whatever the engine could do.

A flat `-async_jobs` series alone cannot tell that apart from an engine that serves one
request at a time. The same driver's `-multi` series can: where N processes gain clearly
and N jobs do not, the jobs were serialized before the engine. Only drivers that answer
asynchronously and work off the calling CPU count (`asynchronous`: /proc/crypto's `async:
yes`, not classed cpu-accel or generic): a CPU driver finishes its request inside io_submit
on every kernel (and OpenSSL's own code runs its jobs in one thread), so its jobs are flat
while its processes gain on several CPUs -- no statement about the kernel.
`async-jobs-serialized` says so once for the run, naming every such driver, and
`judged_async_jobs` keeps only level 1 of that source for the verdicts, so the flat series
never reads as the engine's truth (no false scaling, no needs-concurrency from it).
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass

from pytest_hwcrypto.model.results import Finding, Measurement
from pytest_hwcrypto.units import format_ratio
from pytest_hwcrypto.vocabulary import FindingKind, Source

# N processes "gained" from this many times one's rate on (well clear of noise: the
# smallest real gain of two requests in flight is 2x) ...
MULTI_GAINED = 1.5
# ... while N jobs stayed within this of one's rate.
JOBS_FLAT = 1.25

# (driver, key_bits, op, block_size): one series per way of putting requests in flight
_SeriesKey = tuple[str, int | None, str, int | None]


@dataclass(frozen=True)
class SerializedCase:
    """One driver and block size where -multi N gained and -async_jobs N did not."""

    driver: str
    block_size: int | None
    level: int
    multi_gain: float
    jobs_gain: float


def serialized_cases(
    measurements: Sequence[Measurement], asynchronous: Collection[str]
) -> list[SerializedCase]:
    """Every (driver, size) of an `asynchronous` driver whose -async_jobs series stayed flat
    where its -multi series at the same level gained; at the highest level both measured."""
    multi = _series(measurements, str(Source.OPENSSL))
    jobs = _series(measurements, str(Source.OPENSSL_ASYNC_JOBS))
    cases = []
    for key in sorted(set(multi) & set(jobs), key=str):
        if key[0] not in asynchronous:
            continue
        by_multi, by_jobs = multi[key], jobs[key]
        levels = sorted(n for n in set(by_multi) & set(by_jobs) if n > 1)
        if 1 not in by_multi or 1 not in by_jobs or not levels:
            continue
        level = levels[-1]
        multi_gain = _gain(by_multi, level)
        jobs_gain = _gain(by_jobs, level)
        if multi_gain >= MULTI_GAINED and jobs_gain <= JOBS_FLAT:
            driver, _bits, _op, size = key
            cases.append(SerializedCase(driver, size, level, multi_gain, jobs_gain))
    return cases


def async_jobs_serialized_finding(
    measurements: Sequence[Measurement], algorithm: str, asynchronous: Collection[str]
) -> Finding | None:
    """One finding for the run when any `asynchronous` driver's -async_jobs stayed flat
    where its -multi gained (module doc)."""
    cases = serialized_cases(measurements, asynchronous)
    if not cases:
        return None
    parts = [
        f"{case.driver} at {case.block_size} B: -async_jobs {case.level} "
        f"{format_ratio(case.jobs_gain)}x of one, -multi {case.level} "
        f"{format_ratio(case.multi_gain)}x"
        for case in cases
    ]
    drivers = sorted({case.driver for case in cases})
    detail = (
        f"{algorithm} [openssl -engine afalg -async_jobs]: the ASYNC jobs never had more than "
        f"one request in flight ({'; '.join(parts)}): this kernel completes AF_ALG's AIO "
        "requests one at a time (the stable change 'crypto: algif_skcipher - force "
        "synchronous processing' does), so -async_jobs measures one request at a time here; "
        "-multi measures requests in flight"
    )
    extra: dict[str, object] = {
        "source": str(Source.OPENSSL_ASYNC_JOBS),
        "drivers": drivers,
        "concurrency": max(case.level for case in cases),
    }
    return Finding(FindingKind.ASYNC_JOBS_SERIALIZED, algorithm, detail, extra)


def judged_async_jobs(
    measurements: Sequence[Measurement], serialized: Finding | None
) -> list[Measurement]:
    """The measurements verdicts may take: with `serialized`, the -async_jobs source only
    at level 1 (its other levels are one request at a time too, not requests in flight)."""
    if serialized is None:
        return list(measurements)
    return [
        m for m in measurements if not (m.source == str(Source.OPENSSL_ASYNC_JOBS) and m.level > 1)
    ]


def _series(
    measurements: Sequence[Measurement], source: str
) -> dict[_SeriesKey, dict[int, Measurement]]:
    found: dict[_SeriesKey, dict[int, Measurement]] = {}
    for m in measurements:
        if m.source != source or m.driver is None or m.bytes_per_second <= 0:
            continue
        key = (m.driver, m.key_bits, m.op, m.block_size)
        found.setdefault(key, {})[m.level] = m
    return found


def _gain(by_level: dict[int, Measurement], level: int) -> float:
    return by_level[level].bytes_per_second / by_level[1].bytes_per_second
