# SPDX-License-Identifier: MIT
"""The dmcrypt suite's requests-in-flight dimension: every volume at fio iodepth N, with
dm-crypt's workqueues and without them, beside the bare device at the same depth.

Runs when --hwcrypto-concurrency names more than one level (the levels are the depths,
e.g. 1,2,4,8,16,32): for each driver of xts(aes) and cbc(aes) that dm-crypt will use, a
volume pinned to it, once with its default kcryptd workqueues and once with
`no_read_workqueue no_write_workqueue`; fio 4 KiB random writes and reads (libaio,
O_DIRECT) at every depth, in interleaved rounds (measure/dmcrypt_depth.py). Measurements
carry `concurrency` = depth, `cpu_per_byte` (the whole system's busy CPU per byte) and
the workqueue mode; verdicts are taken per mode and depth: `needs-concurrency` (a hardware
driver that loses at depth 1 and wins deeper), `hw-loses-to-sw`, and `storage-bound`
against the bare device at the same depth.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field

import pytest

from pytest_hwcrypto import fixtures
from pytest_hwcrypto.block import dmcrypt, loop, naming, tools
from pytest_hwcrypto.block.volume import Volume, VolumeMaker
from pytest_hwcrypto.kernel.inventory import InventoryEntry
from pytest_hwcrypto.measure.block_workloads import BlockDevice, fio_missing_reason
from pytest_hwcrypto.measure.cpu import CpuMeter
from pytest_hwcrypto.measure.dmcrypt_depth import MODES, judged_per_mode, run_seconds, sweep
from pytest_hwcrypto.measure.dmcrypt_engine import (
    BARE,
    BARE_ALGORITHM,
    SECTOR_SIZE,
    dmcrypt_targets,
)
from pytest_hwcrypto.model.results import Finding, Measurement, inventory_items
from pytest_hwcrypto.report.recorder import ResultsRecorder
from pytest_hwcrypto.run import HwcryptoRun
from pytest_hwcrypto.verdict.rules import hw_loses_to_sw_findings, needs_concurrency_findings
from pytest_hwcrypto.verdict.storage_bound import storage_bound_by_group

pytestmark = pytest.mark.hwcrypto_dmcrypt


@dataclass
class DepthRun:
    levels: tuple[int, ...]
    drivers: list[str] = field(default_factory=list)
    measurements: list[Measurement] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)


def _storage_bound(measured: Sequence[Measurement]) -> list[Finding]:
    """Each volume against the bare device at its own depth, never another's."""
    by_depth = storage_bound_by_group(measured, BARE, lambda m: m.level)
    return [finding for _, found in by_depth for finding in found]


@pytest.fixture(scope="module")
def depth_run(
    pytestconfig: pytest.Config,
    hwcrypto_run: HwcryptoRun,
    hwcrypto_inventory: list[InventoryEntry],
    hwcrypto_results: ResultsRecorder,
) -> Iterator[DepthRun]:
    options = hwcrypto_run.options
    levels = tuple(sorted(options.concurrency))
    if len(levels) < 2:
        pytest.skip(
            "dm-crypt at several I/O depths runs with --hwcrypto-concurrency naming two or "
            "more levels (e.g. 1,4,16): each is a fio iodepth"
        )
    reason = (
        tools.unavailable_reason()
        or fio_missing_reason()
        or fixtures.concurrent_measuring_reason(pytestconfig, "dmcrypt")
    )
    if reason:
        pytest.skip(reason)
    targets = [
        t
        for t in dmcrypt_targets(hwcrypto_inventory)
        if t.driver != BARE and options.chooses(t.algorithm) and not dmcrypt.refusal(t.driver)
    ]
    result = DepthRun(levels)
    size = options.dmcrypt_bytes
    maker = VolumeMaker(fixtures.run_ledger(hwcrypto_run))
    seconds = run_seconds(options.budget, len(targets) + 1, len(levels))
    meter = CpuMeter()
    attached = loop.attach(maker.ledger, naming.next_name(), size, maker.directory)
    bare = BlockDevice(
        attached.device, size, BARE_ALGORITHM, BARE, None, f"the bare loop device {attached.device}"
    )
    try:
        for mode in MODES:
            volumes: list[Volume] = []
            devices = [bare]
            try:
                for target in targets:
                    try:
                        volume = maker.open(
                            target.driver,
                            target.key_bits or 256,
                            SECTOR_SIZE,
                            size,
                            flags=mode.flags,
                        )
                    except tools.BlockError as error:
                        result.errors.append(f"{mode.label}: {error}")
                        continue
                    volumes.append(volume)
                    devices.append(
                        BlockDevice(
                            volume.path,
                            size,
                            target.algorithm,
                            volume.driver,
                            target.key_bits,
                            volume.evidence,
                            target.driver_class,
                        )
                    )
                    if volume.driver not in result.drivers:
                        result.drivers.append(volume.driver)
                done = sweep(devices, levels, mode, seconds, meter)
                result.measurements += done.measurements()
                result.errors += done.errors
            finally:
                for volume in volumes:
                    maker.close(volume)
    finally:
        loop.detach(maker.ledger, attached)
    items = inventory_items([entry.to_json() for entry in hwcrypto_inventory])
    result.findings = judged_per_mode(
        result.measurements, lambda ms: needs_concurrency_findings(ms, items)
    )
    result.findings += judged_per_mode(
        result.measurements, lambda ms: hw_loses_to_sw_findings(ms, items)
    )
    result.findings += judged_per_mode(result.measurements, _storage_bound)
    for measurement in result.measurements:
        hwcrypto_results.add_measurement(measurement)
    for finding in result.findings:
        hwcrypto_results.add_finding(finding)
    yield result


def test_every_volume_and_the_bare_device_ran_at_every_depth_both_ways(
    depth_run: DepthRun,
) -> None:
    assert not depth_run.errors, "; ".join(depth_run.errors)
    seen = {
        (str(m.driver), str(m.extra["workqueue"]), m.op, m.level) for m in depth_run.measurements
    }
    for driver in [BARE, *depth_run.drivers]:
        for mode in MODES:
            for op in ("read", "write"):
                missing = [n for n in depth_run.levels if (driver, mode.label, op, n) not in seen]
                assert not missing, f"{driver} {mode.label} {op}: no result at depth {missing}"


def test_each_depth_names_its_driver_flags_and_cpu_per_byte(depth_run: DepthRun) -> None:
    assert depth_run.measurements
    for m in depth_run.measurements:
        evidence = str(m.extra["evidence"])
        if m.driver != BARE:
            assert f"capi:{m.driver}-plain64" in evidence, evidence
            inline = m.extra["workqueue"] == "inline"
            assert ("no_read_workqueue" in evidence) == inline, evidence
        assert m.concurrency == m.extra["iodepth"] and m.samples, m
        assert m.cpu_per_byte is not None and m.cpu_per_byte > 0, f"{m.driver} {m.extra}"
