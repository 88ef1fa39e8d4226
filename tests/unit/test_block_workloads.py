# SPDX-License-Identifier: MIT
"""dd's summary read from a real dd run on this host, the fio command line the dmcrypt
workloads use, and their CPU cost per byte."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from pytest_hwcrypto.measure.block_workloads import (
    WORKLOADS,
    BlockDevice,
    Workload,
    _with_cpu,
    fio_argv,
)
from pytest_hwcrypto.model.results import Measurement
from pytest_hwcrypto.parsers.dd import DdParseError, parse_dd_summary
from pytest_hwcrypto.vocabulary import MIB, Source


@pytest.mark.skipif(shutil.which("dd") is None, reason="dd is not installed (coreutils)")
def test_dd_summary_of_a_real_copy_gives_bytes_and_seconds() -> None:
    done = subprocess.run(
        ["dd", "if=/dev/zero", "of=/dev/null", "bs=1M", "count=8"],
        capture_output=True,
        text=True,
        check=True,
    )
    copy = parse_dd_summary(done.stderr)
    assert copy.bytes == 8 * MIB and copy.seconds > 0
    assert copy.bytes_per_second == pytest.approx(8 * MIB / copy.seconds)


def test_dd_without_a_summary_is_one_clear_error() -> None:
    with pytest.raises(DdParseError, match="printed no 'bytes"):
        parse_dd_summary("dd: failed to open '/dev/x': No such file or directory\n")


def test_fio_command_is_o_direct_json_and_picks_the_engine_by_depth() -> None:
    device = BlockDevice("/dev/mapper/v", 64 * MIB, "xts(aes)", "xts-aes-aesni", 256, "proof")
    deep = fio_argv(device, Workload("w", Source.FIO, "randrw", 4096, 32), 2.0)
    assert {"--direct=1", "--output-format=json", "--ioengine=libaio", "--iodepth=32"} <= set(deep)
    assert "--filename=/dev/mapper/v" in deep and "--runtime=2" in deep
    shallow = fio_argv(device, Workload("w", Source.FIO, "read", MIB, 1), 1.5)
    assert "--ioengine=psync" in shallow and f"--bs={MIB}" in shallow


def test_the_workloads_are_those_of_the_kirkwood_report_and_the_issue() -> None:
    labels = {(w.tool, w.rw, w.block_size, w.iodepth) for w in WORKLOADS}
    assert (Source.FIO, "randrw", 4096, 1) in labels and (Source.FIO, "randrw", 4096, 32) in labels
    assert {(Source.DD, "write", MIB, 1), (Source.DD, "read", MIB, 1)} <= labels


def test_cpu_cost_is_bytes_of_all_directions_over_system_cpu_seconds() -> None:
    measurement = Measurement("fio", "xts(aes)", "d", 256, 4096, "read", 10.0)
    [costed] = _with_cpu([measurement], 8 * MIB, 2.0)
    assert costed.extra["bytes_per_system_cpu_second"] == 4 * MIB
    assert costed.extra["system_cpu_seconds"] == 2.0
    assert _with_cpu([measurement], 8 * MIB, None) == [measurement]
