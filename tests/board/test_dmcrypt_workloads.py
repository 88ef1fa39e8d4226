# SPDX-License-Identifier: MIT
"""fio and dd on a real kernel: through a pinned dm-crypt volume and on the bare loop device,
each result naming the proven driver, with CPU cost, and nothing left behind.

(`pytest --hwcrypto-vm=uml tests/board/test_dmcrypt_workloads.py`.)
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from pytest_hwcrypto.block import loop
from pytest_hwcrypto.block.volume import VolumeMaker
from pytest_hwcrypto.ledger import Ledger
from pytest_hwcrypto.measure.block_workloads import (
    DD_WORKLOADS,
    FIO_WORKLOADS,
    BlockDevice,
    run_workload,
)
from pytest_hwcrypto.vocabulary import MIB

SIZE = 16 * MIB
DRIVER = "xts(ecb(aes-generic))"


@pytest.fixture
def block(block_state_dir: Path) -> Path:
    if shutil.which("fio") is None:
        pytest.skip("fio is not installed: apt-get install fio")
    return block_state_dir


def test_fio_and_dd_through_a_pinned_volume_and_on_the_bare_device(block: Path) -> None:
    maker = VolumeMaker(Ledger(block))
    measured = []
    with maker.volume(DRIVER, 256, 4096, SIZE) as volume:
        device = BlockDevice(volume.path, SIZE, "xts(aes)", volume.driver, 256, volume.evidence)
        for workload in (*FIO_WORKLOADS, *DD_WORKLOADS):
            measured += run_workload(device, workload, 1.0)
    attached = loop.attach(maker.ledger, "bare-workload", SIZE)
    try:
        bare = BlockDevice(attached.device, SIZE, "none", "bare-loop", None, "bare")
        for workload in (FIO_WORKLOADS[1], DD_WORKLOADS[0]):
            measured += run_workload(bare, workload, 1.0)
    finally:
        loop.detach(maker.ledger, attached)
    through = [m for m in measured if m.driver == DRIVER]
    # seq write, seq read, randrw qd1 (read + write), randrw qd32 (read + write), dd x2
    assert len(through) == 8, [(m.extra["workload"], m.op) for m in through]
    for m in through:
        assert f"capi:{DRIVER}-plain64" in str(m.extra["evidence"])
        assert m.bytes_per_second > 0 and m.source in ("fio", "dd")
        assert m.extra["bytes_per_system_cpu_second"] > 0
    randrw = {(m.extra["iodepth"], m.op) for m in through if m.extra["rw"] == "randrw"}
    assert randrw == {(1, "read"), (1, "write"), (32, "read"), (32, "write")}
    assert {m.driver for m in measured} == {DRIVER, "bare-loop"}
    assert Ledger(block).entries() == []
    print(
        "; ".join(
            f"{m.driver} {m.extra['workload']} {m.op}: {m.bytes_per_second / MIB:.1f} MiB/s"
            for m in measured
        )
    )
