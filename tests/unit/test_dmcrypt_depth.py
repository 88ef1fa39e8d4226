# SPDX-License-Identifier: MIT
"""dm-crypt at I/O depth N, without a kernel: table flags, the sweep's rounds with a fake
fio, pooling runs into samples, and judging each workqueue mode on its own."""

from __future__ import annotations

from typing import Any

import pytest

from pytest_hwcrypto.block.crypt_table import CryptSpec, parse_table, table_line
from pytest_hwcrypto.block.tools import BlockError
from pytest_hwcrypto.measure import dmcrypt_depth
from pytest_hwcrypto.measure.block_workloads import (
    BlockDevice,
    Workload,
    WorkloadError,
    fio_argv,
)
from pytest_hwcrypto.measure.cpu import CpuMeter
from pytest_hwcrypto.model.results import ROUNDS_KEY, Finding, Measurement
from pytest_hwcrypto.vocabulary import Source
from tests import factories

KEY = bytes(range(16))


def test_workqueue_flags_go_into_the_table_and_are_read_back() -> None:
    spec = CryptSpec("cbc(aes-generic)", flags=dmcrypt_depth.INLINE.flags)
    line = table_line(spec, KEY, "/dev/loop1", 8192, 4096).decode()
    assert line.endswith(" 0 3 sector_size:4096 no_read_workqueue no_write_workqueue\n"), line
    plain = table_line(CryptSpec("cbc(aes-generic)"), KEY, "/dev/loop1", 8192, 512).decode()
    assert plain.endswith("/dev/loop1 0\n"), plain
    # as dm-crypt prints it back (its own order, key zeroed)
    shown = parse_table(
        "0 16 crypt capi:cbc(aes-generic)-plain64 " + "0" * 32 + " 0 7:1 0 3 "
        "no_read_workqueue no_write_workqueue sector_size:4096"
    )
    assert shown.flags == ("no_read_workqueue", "no_write_workqueue")
    assert shown.sector_size == 4096
    with pytest.raises(BlockError, match="same_cpu_crypt"):
        table_line(CryptSpec("cbc(aes-generic)", flags=("same_cpu_crypt",)), KEY, "x", 512, 512)


def test_a_depth_workload_uses_libaio_at_every_depth() -> None:
    device = BlockDevice("/dev/mapper/v", 1 << 20, "cbc(aes)", "cbc-aes-x", 128, "proof")
    for depth in (1, 32):
        argv = fio_argv(
            device, dmcrypt_depth.depth_workload("randread", depth, dmcrypt_depth.INLINE), 1.0
        )
        assert "--ioengine=libaio" in argv and f"--iodepth={depth}" in argv
        assert "--bs=4096" in argv and "--direct=1" in argv
    # the other workloads keep psync one at a time
    argv = fio_argv(device, Workload("w", Source.FIO, "randrw", 4096, 1), 1.0)
    assert "--ioengine=psync" in argv


class FakeFio:
    """Each run: 4 KiB I/Os at min(depth, flows) / latency for the driver, or fails."""

    def __init__(
        self, flows: dict[str, int], fail: frozenset[tuple[str, str, int]] = frozenset()
    ) -> None:
        self.flows = flows
        self.fail = fail
        self.calls: list[tuple[str, str, int]] = []

    def __call__(
        self, device: BlockDevice, workload: Workload, seconds: float, meter: CpuMeter
    ) -> list[Measurement]:
        key = (device.driver, workload.rw, workload.iodepth)
        self.calls.append(key)
        if key in self.fail:
            raise WorkloadError("fio: io_u error")
        rate = min(workload.iodepth, self.flows[device.driver]) * 4096 / 0.05
        rate *= 1 + 0.01 * len(self.calls) % 3  # a little noise between rounds
        moved = int(rate * seconds)
        extra: dict[str, Any] = {
            "workload": workload.label,
            "iodepth": workload.iodepth,
            "rw": workload.rw,
            "evidence": device.evidence,
            "direction_bytes": moved,
            "system_cpu_seconds": 0.01 * seconds,
        }
        op = "read" if workload.rw == "randread" else "write"
        return [
            Measurement(
                str(Source.FIO),
                device.algorithm,
                device.driver,
                device.key_bits,
                4096,
                op,
                rate,
                extra=extra,
            )
        ]


def devices() -> list[BlockDevice]:
    return [
        BlockDevice("/dev/loop0", 1 << 20, "none", "bare-loop", None, "bare"),
        BlockDevice("/dev/mapper/a", 1 << 20, "cbc(aes)", "engine", 128, "capi:engine-plain64"),
    ]


def test_the_sweep_interleaves_rounds_and_pools_runs_into_samples() -> None:
    fio = FakeFio({"bare-loop": 64, "engine": 4})
    done = dmcrypt_depth.sweep(
        devices(), (1, 4, 16), dmcrypt_depth.KCRYPTD, 1.0, CpuMeter(), fio, rounds=3
    )
    # round-robin: every cell once before any cell twice
    first_round = fio.calls[: 2 * 3 * 2]
    assert len(set(first_round)) == len(first_round) == 12
    measured = {(m.driver, m.op, m.level): m for m in done.measurements()}
    assert len(measured) == 12 and not done.errors
    engine = {n: measured[("engine", "read", n)] for n in (1, 4, 16)}
    assert all(len(m.samples) == 3 for m in engine.values())
    assert engine[4].bytes_per_second / engine[1].bytes_per_second == pytest.approx(4, rel=0.05)
    assert engine[16].bytes_per_second / engine[4].bytes_per_second == pytest.approx(1, rel=0.05)
    one = engine[1]
    assert one.concurrency == 1 and one.extra["workqueue"] == "kcryptd"
    assert one.source == "fio-kcryptd"
    assert one.extra[ROUNDS_KEY] == engine[16].extra[ROUNDS_KEY]
    assert one.cpu_per_byte == pytest.approx(0.03 / one.extra["bytes"])
    assert "direction_bytes" not in one.extra


def test_a_cell_whose_run_fails_is_named_and_left_out_of_every_round() -> None:
    fio = FakeFio({"bare-loop": 64, "engine": 4}, fail=frozenset({("engine", "randwrite", 4)}))
    done = dmcrypt_depth.sweep(
        devices(), (1, 4), dmcrypt_depth.INLINE, 1.0, CpuMeter(), fio, rounds=3
    )
    assert done.errors == ["engine fio-randwrite-4K-qd4-inline: fio: io_u error"]
    assert fio.calls.count(("engine", "randwrite", 4)) == 1  # not tried again
    cells = {(m.driver, m.op, m.level) for m in done.measurements()}
    assert ("engine", "write", 4) not in cells and ("engine", "write", 1) in cells


def test_each_workqueue_mode_is_judged_alone_and_named() -> None:
    def measurement(mode: str, level: int) -> Measurement:
        extra = {"workqueue": mode}
        return factories.measurement(
            "engine", 1.0, source="fio", op="read", concurrency=level, extra=extra
        )

    seen: list[set[str]] = []

    def judge(members: Any) -> list[Finding]:
        seen.append({str(m.extra["workqueue"]) for m in members})
        return [Finding("needs-concurrency", "cbc(aes)", "engine loses alone", {"concurrency": 4})]

    measured = [measurement("kcryptd", 1), measurement("inline", 1), measurement("inline", 4)]
    findings = dmcrypt_depth.judged_per_mode(measured, judge)
    assert sorted(map(sorted, seen)) == [["inline"], ["kcryptd"]]
    words = {str(f.extra["workqueue"]): f.detail for f in findings}
    assert words["inline"].startswith("dm-crypt with no_read_workqueue and no_write_workqueue")
    assert words["kcryptd"].startswith("dm-crypt through its kcryptd workqueues")
    assert all(f.extra["concurrency"] == 4 for f in findings)


def test_run_length_shares_the_budget_within_bounds() -> None:
    assert dmcrypt_depth.run_seconds(10_000, 2, 5) == dmcrypt_depth.MAX_SECONDS
    assert dmcrypt_depth.run_seconds(1, 2, 5) == dmcrypt_depth.MIN_SECONDS
    # 3 devices x 5 depths x 2 modes x 2 directions x 3 rounds = 180 runs
    assert dmcrypt_depth.run_seconds(360, 3, 5) == pytest.approx(2.0)


def test_the_suites_fio_workloads_carry_their_depth_as_requests_in_flight() -> None:
    from pytest_hwcrypto.measure import block_workloads

    device = BlockDevice("/dev/mapper/v", 1 << 20, "cbc(aes)", "cbc-aes-x", 128, "proof")
    parsed = Measurement("fio", "?", None, None, 4096, "read", 1.0)
    for workload in block_workloads.WORKLOADS:
        labelled = block_workloads._label(parsed, device, workload, {})
        expected = workload.iodepth if workload.tool == Source.FIO else None
        assert labelled.concurrency == expected, workload.label
    assert {w.iodepth for w in block_workloads.FIO_WORKLOADS} == {1, 32}
