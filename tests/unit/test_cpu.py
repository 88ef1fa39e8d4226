# SPDX-License-Identifier: MIT
"""measure/cpu.py: /proc parsers, usage arithmetic, and the meter on this machine."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from pytest_hwcrypto.measure.cpu import (
    CpuMeter,
    CpuSnapshot,
    CpuStatError,
    CpuUsage,
    bytes_per_cpu_second,
    parse_pid_stat,
    parse_proc_stat,
    process_cpu_seconds,
    total_usage,
    usage_between,
)

# /proc/stat of a 2-CPU machine (kernel 6.x: ten columns)
PROC_STAT = """\
cpu  1000 20 300 5000 40 5 7 3 100 0
cpu0 500 10 150 2500 20 2 3 1 50 0
cpu1 500 10 150 2500 20 3 4 2 50 0
intr 12345 0 0
ctxt 999
btime 1700000000
"""

# The UML board prints no idle time at all (its idle loop sleeps on the host).
UML_PROC_STAT = "cpu  386 0 34 0 0 0 0 0 0 0\ncpu0 386 0 34 0 0 0 0 0 0 0\n"


def test_busy_counts_everything_but_idle_and_iowait() -> None:
    times = parse_proc_stat(PROC_STAT, 100)
    assert times.busy == pytest.approx((1000 + 20 + 300 + 5 + 7 + 3) / 100)
    assert times.idle == pytest.approx((5000 + 40) / 100)


def test_guest_time_is_not_counted_twice() -> None:
    # guest (100) is already inside user (1000)
    assert parse_proc_stat(PROC_STAT, 100).busy == pytest.approx(13.35)


def test_uml_stat_and_old_kernels_with_fewer_columns() -> None:
    assert parse_proc_stat(UML_PROC_STAT, 100).busy == pytest.approx(4.2)
    assert parse_proc_stat("cpu 10 0 10 80\n", 100).busy == pytest.approx(0.2)


@pytest.mark.parametrize("text", ["", "intr 1 2\n", "cpu a b c\n"])
def test_bad_proc_stat_is_an_error(text: str) -> None:
    with pytest.raises(CpuStatError):
        parse_proc_stat(text, 100)


def test_pid_stat_with_spaces_and_parentheses_in_the_name() -> None:
    fields = ["S"] + ["0"] * 10 + ["250", "50"] + ["0"] * 30
    line = "4242 (weird) name (x)) " + " ".join(fields)
    assert parse_pid_stat(line, 100) == pytest.approx(3.0)


@pytest.mark.parametrize("text", ["garbage", "1 (x) S 1 2"])
def test_bad_pid_stat_is_an_error(text: str) -> None:
    with pytest.raises(CpuStatError):
        parse_pid_stat(text, 100)


def test_usage_leaves_out_the_background_load() -> None:
    before = CpuSnapshot(process=1.0, system_busy=10.0, excluded=2.0)
    after = CpuSnapshot(process=1.5, system_busy=12.0, excluded=3.0)
    usage = usage_between(before, after)
    assert usage.process_seconds == pytest.approx(0.5)
    assert usage.system_seconds == pytest.approx(1.0)


def test_usage_never_goes_negative_on_coarse_counters() -> None:
    before = CpuSnapshot(process=1.0, system_busy=10.0, excluded=0.0)
    after = CpuSnapshot(process=1.0, system_busy=10.0, excluded=0.01)
    assert usage_between(before, after).system_seconds == 0.0


def test_unknown_system_time_stays_unknown_when_summed() -> None:
    before = CpuSnapshot(1.0, None, 0.0)
    after = CpuSnapshot(2.0, None, 0.0)
    unknown = usage_between(before, after)
    assert unknown == CpuUsage(1.0, None)
    assert total_usage([CpuUsage(1.0, 2.0), unknown]).system_seconds is None
    assert total_usage([CpuUsage(1.0, 2.0), CpuUsage(0.5, 0.5)]) == CpuUsage(1.5, 2.5)


def test_bytes_per_cpu_second() -> None:
    assert bytes_per_cpu_second(1000.0, 0.5) == 2000.0
    assert bytes_per_cpu_second(1000.0, 0.0) is None
    assert bytes_per_cpu_second(1000.0, None) is None


def test_process_cpu_grows_when_working() -> None:
    before = process_cpu_seconds()
    total = 0
    while process_cpu_seconds() - before < 0.05:
        total += sum(range(1000))
    assert total > 0


def test_meter_reads_this_machine_and_excludes_named_processes(tmp_path: Path) -> None:
    proc = tmp_path / "proc"
    (proc / "77").mkdir(parents=True)
    (proc / "stat").write_text(PROC_STAT)
    fields = ["R"] + ["0"] * 10 + ["100", "0"] + ["0"] * 30
    (proc / "77" / "stat").write_text("77 (spin) " + " ".join(fields))
    ticks = os.sysconf("SC_CLK_TCK")
    meter = CpuMeter(excluded_pids=lambda: [77, 78], proc=proc)
    snapshot = meter.snapshot()
    assert snapshot.system_busy == pytest.approx(1335 / ticks)
    assert snapshot.excluded == pytest.approx(100 / ticks)
    assert snapshot.process > 0


def test_meter_without_proc_stat_reports_unknown(tmp_path: Path) -> None:
    meter = CpuMeter(proc=tmp_path)
    assert meter.snapshot().system_busy is None
    assert meter.snapshot().system_busy is None
