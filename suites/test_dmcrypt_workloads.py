# SPDX-License-Identifier: MIT
"""The dmcrypt suite's fio and dd workloads: what users run on encrypted disks, per driver,
beside the same workload on the bare loop device in the same boot.

For every driver of xts(aes) and cbc(aes) that dm-crypt will use, one volume pinned to it
(capi:, proven by table + refcnt) of --hwcrypto-dmcrypt-bytes, and one bare loop device of
the same size: fio sequential 1 MiB write and read and random 4 KiB read/write at iodepth 1
and 32 (O_DIRECT, JSON output read by the fio parser), dd `conv=fsync` writes and reads
after dropping caches (measure/block_workloads.py). Measurements carry source fio or dd,
the proven driver, the workload and the CPU cost per byte, under --hwcrypto-load if set.
A volume whose workload runs within noise of the bare device's is `storage-bound`.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field, replace

import pytest

from pytest_hwcrypto import fixtures
from pytest_hwcrypto.block import dmcrypt, loop, naming, tools
from pytest_hwcrypto.block.volume import VolumeMaker
from pytest_hwcrypto.kernel.inventory import InventoryEntry
from pytest_hwcrypto.measure.block_workloads import (
    DD_WORKLOADS,
    WORKLOADS,
    BlockDevice,
    Workload,
    WorkloadError,
    fio_missing_reason,
    run_workload,
)
from pytest_hwcrypto.measure.cpu import CpuMeter
from pytest_hwcrypto.measure.dmcrypt_engine import (
    BARE,
    BARE_ALGORITHM,
    SECTOR_SIZE,
    dmcrypt_targets,
)
from pytest_hwcrypto.measure.load import BackgroundLoad
from pytest_hwcrypto.model.results import Finding, Measurement
from pytest_hwcrypto.report.recorder import ResultsRecorder
from pytest_hwcrypto.run import HwcryptoRun
from pytest_hwcrypto.verdict.storage_bound import storage_bound_by_group

pytestmark = pytest.mark.hwcrypto_dmcrypt

MIN_SECONDS, MAX_SECONDS = 1.0, 5.0


@dataclass
class WorkloadRun:
    measurements: list[Measurement] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    drivers: list[str] = field(default_factory=list)
    skipped: str | None = None  # why the fio workloads did not run


def _seconds(budget: float, devices: int, workloads: int) -> float:
    return min(MAX_SECONDS, max(MIN_SECONDS, budget / max(devices * workloads, 1)))


def _measure(
    device: BlockDevice,
    workloads: Sequence[Workload],
    seconds: float,
    meter: CpuMeter,
    run: WorkloadRun,
) -> None:
    for workload in workloads:
        try:
            run.measurements += run_workload(device, workload, seconds, meter)
        except WorkloadError as error:
            run.errors.append(f"{device.driver} {workload.label}: {error}")


def _findings(measured: Sequence[Measurement]) -> list[Finding]:
    """storage-bound per workload: each is compared only with the same workload on bare."""
    findings: list[Finding] = []
    by_workload = storage_bound_by_group(measured, BARE, lambda m: str(m.extra["workload"]))
    for label, found in by_workload:
        for finding in found:
            extra = {**finding.extra, "workload": label}
            findings.append(replace(finding, detail=f"{label}: {finding.detail}", extra=extra))
    return findings


@pytest.fixture(scope="module")
def workload_run(
    pytestconfig: pytest.Config,
    hwcrypto_run: HwcryptoRun,
    hwcrypto_inventory: list[InventoryEntry],
    hwcrypto_results: ResultsRecorder,
) -> Iterator[WorkloadRun]:
    reason = tools.unavailable_reason() or fixtures.concurrent_measuring_reason(
        pytestconfig, "dmcrypt"
    )
    if reason:
        pytest.skip(reason)
    result = WorkloadRun(skipped=fio_missing_reason())
    workloads = DD_WORKLOADS if result.skipped else WORKLOADS
    options = hwcrypto_run.options
    targets = [
        t
        for t in dmcrypt_targets(hwcrypto_inventory)
        if t.driver == BARE or (options.chooses(t.algorithm) and not dmcrypt.refusal(t.driver))
    ]
    size = options.dmcrypt_bytes
    seconds = _seconds(options.budget, len(targets), len(workloads))
    maker = VolumeMaker(fixtures.run_ledger(hwcrypto_run))
    with BackgroundLoad(options.load) as load:
        meter = CpuMeter(excluded_pids=lambda: load.pids)
        for target in targets:
            if target.driver == BARE:
                attached = loop.attach(maker.ledger, naming.next_name(), size, maker.directory)
                evidence = f"the bare loop device {attached.device}, no cipher"
                bare = BlockDevice(attached.device, size, BARE_ALGORITHM, BARE, None, evidence)
                try:
                    _measure(bare, workloads, seconds, meter, result)
                finally:
                    loop.detach(maker.ledger, attached)
                continue
            try:
                volume = maker.open(target.driver, target.key_bits or 256, SECTOR_SIZE, size)
            except tools.BlockError as error:
                result.errors.append(str(error))
                continue
            try:
                device = BlockDevice(
                    volume.path,
                    size,
                    target.algorithm,
                    volume.driver,
                    target.key_bits,
                    volume.evidence,
                    target.driver_class,
                )
                result.drivers.append(volume.driver)
                _measure(device, workloads, seconds, meter, result)
            finally:
                maker.close(volume)
        load_words = load.describe()
    for measurement in result.measurements:
        measurement.extra["load"] = load_words
        hwcrypto_results.add_measurement(measurement)
    result.findings = _findings(result.measurements)
    for finding in result.findings:
        hwcrypto_results.add_finding(finding)
    yield result


def test_every_volume_and_the_bare_device_ran_every_workload(workload_run: WorkloadRun) -> None:
    assert not workload_run.errors, "; ".join(workload_run.errors)
    labels = {(str(m.driver), str(m.extra["workload"])) for m in workload_run.measurements}
    expected_labels = {
        str(m.extra["workload"]) for m in workload_run.measurements if m.driver == BARE
    }
    assert expected_labels, "the bare loop device ran no workload"
    for driver in workload_run.drivers:
        missing = {label for label in expected_labels if (driver, label) not in labels}
        assert not missing, f"{driver}: no result for {sorted(missing)}"
    if workload_run.skipped:
        pytest.skip(workload_run.skipped)


def test_each_measurement_names_its_proven_driver_and_cpu_cost(
    workload_run: WorkloadRun,
) -> None:
    assert workload_run.measurements
    for m in workload_run.measurements:
        evidence = str(m.extra["evidence"])
        if m.driver != BARE:
            assert f"capi:{m.driver}-plain64" in evidence and "refcnt" in evidence, evidence
        assert m.source in ("fio", "dd") and m.bytes_per_second > 0, m
        assert m.extra.get("system_cpu_seconds") is not None, f"{m.driver} {m.extra['workload']}"
    for finding in workload_run.findings:  # storage-bound, told apart per workload
        assert str(finding.detail).startswith(str(finding.extra["workload"]) + ":"), finding
    random = [m for m in workload_run.measurements if m.extra["rw"] == "randrw"]
    if not workload_run.skipped:
        assert {m.extra["iodepth"] for m in random} == {1, 32}
        assert {m.op for m in random} == {"read", "write"}
