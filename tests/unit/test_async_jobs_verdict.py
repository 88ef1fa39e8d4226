# SPDX-License-Identifier: MIT
"""async-jobs-serialized on small fakes: -async_jobs N flat where -multi N gained (the
kernel completed AIO in io_submit), against both gaining (AIO in flight) and neither
gaining (a driver that serves one request at a time either way)."""

from __future__ import annotations

from pytest_hwcrypto.model.results import Measurement, inventory_items
from pytest_hwcrypto.verdict.rules import (
    async_jobs_serialized_finding,
    judged_async_jobs,
    needs_concurrency_findings,
)
from tests.factories import measurement, spread

ENGINE = "cbc-aes-hwcrypto-test-async"
KIB = 1024
# drivers that answer asynchronously off the calling CPU (the suite's reading of /proc/crypto)
ASYNCHRONOUS = {ENGINE}


def at(source: str, driver: str, level: int, requests_per_second: float) -> Measurement:
    rate = requests_per_second * 4 * KIB
    samples = spread(rate, (-1.0, 0.0, 1.0))
    return measurement(
        driver, rate, source=source, algorithm="aes-128-cbc", samples=samples, concurrency=level
    )


def both_ways(driver: str, multi: dict[int, float], jobs: dict[int, float]) -> list[Measurement]:
    return [at("openssl", driver, n, r) for n, r in multi.items()] + [
        at("openssl-async-jobs", driver, n, r) for n, r in jobs.items()
    ]


def test_flat_jobs_where_processes_gain_are_said_once_naming_the_driver() -> None:
    # the figures of 6.1.192 on the QEMU board: -async_jobs 1/4 9.0/8.8, -multi 1/4 9.0/34.5
    data = both_ways(ENGINE, {1: 9.0, 4: 34.5}, {1: 9.0, 4: 8.8})
    data += both_ways("openssl", {1: 2000.0, 4: 3900.0}, {1: 2000.0, 4: 2010.0})
    data += both_ways("cbc-aes-aesni", {1: 300.0, 4: 590.0}, {1: 300.0, 4: 301.0})
    finding = async_jobs_serialized_finding(data, "aes-128-cbc", ASYNCHRONOUS)
    assert finding is not None and finding.kind == "async-jobs-serialized"
    # OpenSSL's own code and the CPU's driver gain with processes (two CPUs) and not with
    # jobs on every kernel: they say nothing about its AIO
    assert finding.extra["drivers"] == [ENGINE]
    assert finding.extra["concurrency"] == 4
    assert "-async_jobs 4 0.98x of one, -multi 4 3.83x" in finding.detail
    judged = judged_async_jobs(data, finding)
    assert {(m.source, m.level) for m in judged} == {
        ("openssl", 1),
        ("openssl", 4),
        ("openssl-async-jobs", 1),
    }


def test_jobs_that_gain_like_processes_are_requests_in_flight() -> None:
    # 6.1.176: -async_jobs 1/4 9.0/36.1, -multi 4 38.2
    data = both_ways(ENGINE, {1: 9.0, 4: 38.2}, {1: 9.0, 4: 36.1})
    assert async_jobs_serialized_finding(data, "aes-128-cbc", ASYNCHRONOUS) is None
    assert judged_async_jobs(data, None) == data


def test_a_driver_that_gains_neither_way_says_nothing_about_the_kernel() -> None:
    data = both_ways(ENGINE, {1: 9.0, 4: 9.3}, {1: 9.0, 4: 9.1})
    assert async_jobs_serialized_finding(data, "aes-128-cbc", ASYNCHRONOUS) is None


def test_cpu_drivers_flat_with_jobs_say_nothing_about_the_kernel() -> None:
    """On a kernel that keeps AIO in flight the engine's jobs gain; aesni's do not (it
    works inside io_submit), and that alone is no finding."""
    data = both_ways(ENGINE, {1: 9.0, 4: 38.2}, {1: 9.0, 4: 36.1})
    data += both_ways("cbc-aes-aesni", {1: 300.0, 4: 590.0}, {1: 300.0, 4: 301.0})
    assert async_jobs_serialized_finding(data, "aes-128-cbc", ASYNCHRONOUS) is None


def test_without_both_ways_at_a_common_level_nothing_is_said() -> None:
    only_jobs = [at("openssl-async-jobs", ENGINE, n, 9.0) for n in (1, 4)]
    assert async_jobs_serialized_finding(only_jobs, "aes-128-cbc", ASYNCHRONOUS) is None
    other_levels = both_ways(ENGINE, {1: 9.0, 2: 18.0}, {1: 9.0, 4: 9.0})
    assert async_jobs_serialized_finding(other_levels, "aes-128-cbc", ASYNCHRONOUS) is None


def test_the_serialized_levels_cannot_make_needs_concurrency() -> None:
    """An engine that loses to software alone: with the flat -async_jobs levels left out,
    no needs-concurrency can come from that source (nor a false one from noise)."""
    inventory = inventory_items(
        [
            {"name": "cbc(aes)", "driver": ENGINE, "priority": 50, "class": "offload"},
            {"name": "cbc(aes)", "driver": "cbc(aes-generic)", "priority": 100, "class": "generic"},
        ]
    )
    data = [
        m
        for driver, alone, four in ((ENGINE, 9.0, 9.1), ("cbc(aes-generic)", 20.0, 5.0))
        for m in both_ways(driver, {1: alone, 4: alone * 3}, {1: alone, 4: four})
    ]
    kernel = [m for m in data if m.source == "openssl-async-jobs"]
    finding = async_jobs_serialized_finding(data, "aes-128-cbc", ASYNCHRONOUS)
    assert finding is not None
    # unfiltered, generic's collapse at -async_jobs 4 would read as the engine winning there
    assert needs_concurrency_findings(kernel, inventory)
    assert not needs_concurrency_findings(judged_async_jobs(kernel, finding), inventory)
