# SPDX-License-Identifier: MIT
"""fio and dd workloads on a block device: a dm-crypt volume or the bare loop device.

What users run on encrypted disks, measured on the same devices as the dmcrypt engine:

* fio, `--output-format=json`, O_DIRECT: sequential write and read of 1 MiB requests, and
  random 4 KiB read/write (randrw, as in the Kirkwood report) at iodepth 1 and 32; read
  with the project's fio parser (parsers/fio_json.py);
* dd with `conv=fsync` after `sync; echo 3 > /proc/sys/vm/drop_caches` (buffered, as in
  the report: the page cache is in the path and fsync waits for the cipher), and a read
  back after dropping the caches again.

Each result is a `Measurement` with source fio or dd, the volume's algorithm and proven
driver, the workload's label and iodepth in `extra`, and CPU cost: the whole system's
busy CPU seconds while the tool ran (dm-crypt encrypts in kernel workers, not in the
tool's process), as bytes per CPU second. Without fio the fio workloads are not run;
`fio_missing_reason` says so and how to fix it (the dmcrypt engine's own O_DIRECT loop
measures the same volumes either way).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from pytest_hwcrypto.measure.cpu import CpuMeter, bytes_per_cpu_second, usage_between
from pytest_hwcrypto.model.results import Measurement
from pytest_hwcrypto.parsers.dd import DdParseError, parse_dd_summary
from pytest_hwcrypto.parsers.fio_json import find_tables
from pytest_hwcrypto.parsers.paste import read_paste
from pytest_hwcrypto.vocabulary import MIB, Source

DROP_CACHES = Path("/proc/sys/vm/drop_caches")
TOOL_GRACE_SECONDS = 60.0


class WorkloadError(RuntimeError):
    """A workload could not run or its output could not be read; says which and why."""


@dataclass(frozen=True)
class Workload:
    label: str  # e.g. fio-randrw-4K-qd32: storage-bound compares volume and bare per label
    tool: Source
    rw: str  # fio's rw (write, read, randrw); dd: write or read
    block_size: int
    iodepth: int = 1
    # fio's engine; None: psync at depth 1, libaio deeper. A depth sweep sets libaio at
    # every depth, so that only the depth changes between its levels.
    ioengine: str | None = None


SEQUENTIAL = MIB
RANDOM = 4096
FIO_WORKLOADS = (
    Workload("fio-seq-write-1M", Source.FIO, "write", SEQUENTIAL),
    Workload("fio-seq-read-1M", Source.FIO, "read", SEQUENTIAL),
    Workload("fio-randrw-4K-qd1", Source.FIO, "randrw", RANDOM, 1),
    Workload("fio-randrw-4K-qd32", Source.FIO, "randrw", RANDOM, 32),
)
DD_WORKLOADS = (
    Workload("dd-write-fsync-1M", Source.DD, "write", SEQUENTIAL),
    Workload("dd-read-1M", Source.DD, "read", SEQUENTIAL),
)
WORKLOADS = FIO_WORKLOADS + DD_WORKLOADS


@dataclass(frozen=True)
class BlockDevice:
    """What a workload runs on, and what its measurements say about it."""

    path: str
    size: int
    algorithm: str
    driver: str
    key_bits: int | None
    evidence: str
    driver_class: str | None = None


def fio_missing_reason() -> str | None:
    if shutil.which("fio") is None:
        return (
            "fio is not installed (apt-get install fio): its workloads are not run; the "
            "dmcrypt engine's own O_DIRECT loop still measures every volume"
        )
    return None


def fio_argv(device: BlockDevice, workload: Workload, seconds: float) -> list[str]:
    engine = workload.ioengine or ("libaio" if workload.iodepth > 1 else "psync")
    return [
        "fio",
        f"--name={workload.label}",
        f"--filename={device.path}",
        f"--rw={workload.rw}",
        f"--bs={workload.block_size}",
        f"--iodepth={workload.iodepth}",
        f"--ioengine={engine}",
        "--direct=1",
        f"--size={device.size}",
        f"--runtime={seconds:g}",
        "--time_based",
        "--randrepeat=0",
        "--norandommap",
        "--output-format=json",
    ]


def drop_caches() -> None:
    os.sync()
    DROP_CACHES.write_text("3\n")


def run_workload(
    device: BlockDevice, workload: Workload, seconds: float, meter: CpuMeter | None = None
) -> list[Measurement]:
    """Run one workload on `device` for about `seconds`; its measurements (one per
    direction: a randrw fio job gives a read and a write)."""
    meter = meter or CpuMeter()
    if workload.tool == Source.FIO:
        return _fio(device, workload, seconds, meter)
    return [_dd(device, workload, meter)]


def _run(argv: list[str], timeout: float) -> subprocess.CompletedProcess[str]:
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, check=False)
    except FileNotFoundError:
        raise WorkloadError(f"{argv[0]} is not installed (apt-get install {argv[0]})") from None
    except subprocess.TimeoutExpired:
        raise WorkloadError(f"{' '.join(argv[:3])}: no answer after {timeout:g} s") from None
    if done.returncode != 0:
        complaint = (done.stderr or done.stdout).strip().splitlines()
        last = complaint[-1] if complaint else f"exit status {done.returncode}"
        raise WorkloadError(f"{' '.join(argv[:3])} …: {last}")
    return done


def _fio(
    device: BlockDevice, workload: Workload, seconds: float, meter: CpuMeter
) -> list[Measurement]:
    before = meter.snapshot()
    done = _run(fio_argv(device, workload, seconds), seconds + TOOL_GRACE_SECONDS)
    usage = usage_between(before, meter.snapshot())
    tables = find_tables(read_paste(done.stdout, f"fio {workload.label}"))
    parsed = [m for table in tables for m in table.measurements]
    if not parsed:
        raise WorkloadError(f"fio {workload.label} on {device.path}: no job result in its JSON")
    moved = _fio_io_bytes(done.stdout)
    out = []
    for measurement in parsed:
        extra = dict(measurement.extra)
        extra["direction_bytes"] = moved.get(measurement.op)
        out.append(_label(measurement, device, workload, extra))
    return _with_cpu(out, sum(moved.values()), usage.system_seconds)


def _fio_io_bytes(text: str) -> dict[str, int]:
    """Bytes moved per direction: for CPU cost per byte (the parser keeps rates)."""
    try:
        document: Any = json.loads(text[text.index("{") :])
    except (ValueError, json.JSONDecodeError):
        return {}
    moved: dict[str, int] = {}
    for job in document.get("jobs", []):
        for op in ("read", "write"):
            section = job.get(op) or {}
            moved[op] = moved.get(op, 0) + int(section.get("io_bytes", 0) or 0)
    return {op: count for op, count in moved.items() if count}


def _dd(device: BlockDevice, workload: Workload, meter: CpuMeter) -> Measurement:
    count = device.size // workload.block_size
    bs = f"bs={workload.block_size}"
    if workload.rw == "write":
        argv = ["dd", "if=/dev/zero", f"of={device.path}", bs, f"count={count}", "conv=fsync"]
    else:
        argv = ["dd", f"if={device.path}", "of=/dev/null", bs, f"count={count}"]
    drop_caches()
    before = meter.snapshot()
    done = _run(argv, TOOL_GRACE_SECONDS * 5)
    usage = usage_between(before, meter.snapshot())
    try:
        copy = parse_dd_summary(done.stderr)
    except DdParseError as error:
        raise WorkloadError(f"dd {workload.label} on {device.path}: {error}") from None
    measurement = Measurement(
        source=str(Source.DD),
        algorithm=device.algorithm,
        driver=device.driver,
        key_bits=device.key_bits,
        block_size=workload.block_size,
        op=workload.rw,
        bytes_per_second=copy.bytes_per_second,
        extra={"bytes": copy.bytes, "seconds": copy.seconds},
    )
    labelled = _label(measurement, device, workload, measurement.extra)
    return _with_cpu([labelled], copy.bytes, usage.system_seconds)[0]


def _label(
    measurement: Measurement, device: BlockDevice, workload: Workload, extra: dict[str, Any]
) -> Measurement:
    extra = {
        **extra,
        "workload": workload.label,
        "iodepth": workload.iodepth,
        "rw": workload.rw,
        "evidence": device.evidence,
    }
    # fio's iodepth is how many requests were in flight: qd32 is judged against qd32 (the
    # verdicts group by level), never against one at a time. dd has one in flight.
    return replace(
        measurement,
        algorithm=device.algorithm,
        driver=device.driver,
        key_bits=device.key_bits,
        block_size=workload.block_size,
        driver_class=device.driver_class,
        extra=extra,
        concurrency=workload.iodepth if workload.tool == Source.FIO else None,
    )


def _with_cpu(
    measurements: list[Measurement], moved: int, system_seconds: float | None
) -> list[Measurement]:
    """The system's busy CPU while the tool ran, over the bytes it moved in all directions."""
    if system_seconds is None:
        return measurements
    per_byte = bytes_per_cpu_second(float(moved), system_seconds)
    out = []
    for measurement in measurements:
        extra = dict(measurement.extra, system_cpu_seconds=round(system_seconds, 6))
        if per_byte is not None:
            extra["bytes_per_system_cpu_second"] = per_byte
        out.append(replace(measurement, extra=extra))
    return out
