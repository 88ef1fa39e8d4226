# SPDX-License-Identifier: MIT
"""A sample with no CPU reading (a host-driven board's helper) records no CPU figure.

Zeros there would let a `cpu_per_byte` rule pass every driver: a check that cannot fail.
"""

from __future__ import annotations

from pytest_hwcrypto.measure.cpu import CPU_NOT_MEASURED, CpuUsage
from pytest_hwcrypto.measure.engine import Sample
from pytest_hwcrypto.measure.plan import make_plan
from pytest_hwcrypto.measure.runner import CellRecord
from pytest_hwcrypto.measure.targets import Target


def record_of(*cpu: CpuUsage) -> CellRecord:
    target = Target("cbc(aes)", "cbc-aes-aesni", "skcipher", 128, 0, block_multiple=16)
    cell = make_plan([target], (4096,), 10.0).cells[0]
    record = CellRecord(cell, target.driver)
    for usage in cpu:
        record.add_sample(Sample(1000, 4096, 0.01, cpu=usage))
    return record


def test_samples_without_a_cpu_reading_record_none_not_zero() -> None:
    measurement = record_of(CPU_NOT_MEASURED, CPU_NOT_MEASURED).measurement("none")
    assert measurement is not None
    assert measurement.cpu_seconds is None
    assert measurement.bytes_per_cpu_second is None
    assert measurement.cpu_per_byte is None
    assert "system_cpu_seconds" not in measurement.extra


def test_measured_samples_still_record_their_cpu() -> None:
    usage = CpuUsage(process_seconds=0.004, system_seconds=0.005)
    measurement = record_of(usage, usage).measurement("none")
    assert measurement is not None
    assert measurement.cpu_seconds == 0.008
    assert measurement.cpu_per_byte is not None and measurement.cpu_per_byte > 0


def test_one_unmeasured_sample_makes_the_sum_unmeasured() -> None:
    assert not (CpuUsage(process_seconds=1.0) + CPU_NOT_MEASURED).measured
