# SPDX-License-Identifier: MIT
"""dm-crypt at I/O depth N: how many requests the cipher gets in flight from the disk path.

dm-crypt submits one cipher request per encryption sector and, for an asynchronous driver,
does not wait for it: with 4096-byte sectors and 4 KiB random I/O, fio's iodepth N is N
requests in flight at the driver. An offload engine with K flows then runs min(N, K) times
as fast as at depth 1; a synchronous driver gains at most what the CPUs running it add.

Each volume (one per driver, pinned with capi: and proven, block/volume.py) is measured
with fio random reads and writes of 4 KiB (libaio at every depth, so only the depth
varies), O_DIRECT, at every --hwcrypto-concurrency level, twice: with dm-crypt's
workqueues in the path (its default: kcryptd workers) and without them
(`no_read_workqueue no_write_workqueue`: a read decrypted where it completes, a write
encrypted by its submitter). The bare loop device runs the same jobs at the same depths
in the same rounds: the like-for-like baseline (its depth N against a volume's depth N,
never another depth's). Rounds interleave every device, depth and direction, one short fio
run each, so a drifting board slows all of a round alike; a cell's runs are its samples.

Measurements: source fio-kcryptd or fio-inline (the mode is part of the path, so a
driver's two modes never share a table cell), 4096 B, op read or write, `concurrency` = the
depth, `cpu_per_byte` = the whole system's busy CPU seconds over the bytes moved (dm-crypt
works in kernel threads and completion contexts, not in fio's process), extra `workqueue`,
`iodepth`, `workload` and the volume's evidence. Verdicts are taken per workqueue mode
(measured one way, judged against the same way): `needs-concurrency`,
`hw-loses-to-sw` and `storage-bound` per depth.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace

from pytest_hwcrypto.block.crypt_table import NO_READ_WORKQUEUE, NO_WRITE_WORKQUEUE
from pytest_hwcrypto.measure.block_workloads import (
    BlockDevice,
    Workload,
    WorkloadError,
    run_workload,
)
from pytest_hwcrypto.measure.cpu import CpuMeter
from pytest_hwcrypto.model.results import ROUNDS_KEY, Finding, Measurement
from pytest_hwcrypto.vocabulary import Source

DEPTH_BLOCK_SIZE = 4096  # one encryption sector: one I/O in flight is one cipher request
DIRECTIONS = ("randwrite", "randread")
ROUNDS = 3
MIN_SECONDS, MAX_SECONDS = 1.0, 4.0


@dataclass(frozen=True)
class WorkqueueMode:
    """How dm-crypt hands requests to the cipher: its label, the table flags, in words."""

    label: str
    flags: tuple[str, ...]
    words: str


KCRYPTD = WorkqueueMode("kcryptd", (), "dm-crypt through its kcryptd workqueues")
INLINE = WorkqueueMode(
    "inline",
    (NO_READ_WORKQUEUE, NO_WRITE_WORKQUEUE),
    f"dm-crypt with {NO_READ_WORKQUEUE} and {NO_WRITE_WORKQUEUE}",
)
MODES = (KCRYPTD, INLINE)


def depth_source(mode: WorkqueueMode) -> str:
    """fio-kcryptd, fio-inline: each mode is its own path in tables and verdicts, so a
    driver's two modes (and the suite's other fio workloads) never share a cell."""
    return f"{Source.FIO}-{mode.label}"


def depth_workload(rw: str, depth: int, mode: WorkqueueMode) -> Workload:
    label = f"fio-{rw}-4K-qd{depth}-{mode.label}"
    return Workload(label, Source.FIO, rw, DEPTH_BLOCK_SIZE, depth, ioengine="libaio")


def run_seconds(budget: float, devices: int, levels: int, modes: int = len(MODES)) -> float:
    """One fio run's length: the budget over every run of the sweep, within bounds."""
    runs = max(devices * levels * modes * len(DIRECTIONS) * ROUNDS, 1)
    return min(MAX_SECONDS, max(MIN_SECONDS, budget / runs))


Runner = Callable[[BlockDevice, Workload, float, CpuMeter], list[Measurement]]


@dataclass
class DepthSweep:
    """Every device's fio runs for one workqueue mode, by cell, and what went wrong."""

    mode: WorkqueueMode
    runs: dict[tuple[str, str, int], list[Measurement]] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)
    rounds_id: str = field(default_factory=lambda: f"dmcrypt-depth-{uuid.uuid4().hex[:12]}")

    def measurements(self) -> list[Measurement]:
        """One measurement per (driver, direction, depth): its runs are the samples."""
        return [self._pooled(runs) for runs in self.runs.values() if runs]

    def _pooled(self, runs: Sequence[Measurement]) -> Measurement:
        rates = [m.bytes_per_second for m in runs]
        ordered = sorted(rates)
        middle = len(ordered) // 2
        median = (
            ordered[middle] if len(ordered) % 2 else (ordered[middle - 1] + ordered[middle]) / 2.0
        )
        moved = sum(int(m.extra.get("direction_bytes") or 0) for m in runs)
        busy = [m.extra.get("system_cpu_seconds") for m in runs]
        # A randread or randwrite job moves bytes one way: the run's busy CPU is theirs.
        cpu_per_byte = (
            sum(float(b) for b in busy if b is not None) / moved
            if moved and all(b is not None for b in busy)
            else None
        )
        first = runs[0]
        extra = {
            key: value
            for key, value in first.extra.items()
            if key not in ("direction_bytes", "system_cpu_seconds", "bytes_per_system_cpu_second")
        }
        extra.update(
            {
                "workqueue": self.mode.label,
                "runs": len(runs),
                "bytes": moved,
                ROUNDS_KEY: self.rounds_id,
            }
        )
        return replace(
            first,
            source=depth_source(self.mode),
            bytes_per_second=median,
            samples=rates,
            concurrency=int(first.extra["iodepth"]),
            cpu_per_byte=cpu_per_byte,
            extra=extra,
        )


def sweep(
    devices: Sequence[BlockDevice],
    levels: Sequence[int],
    mode: WorkqueueMode,
    seconds: float,
    meter: CpuMeter,
    runner: Runner = run_workload,
    rounds: int = ROUNDS,
) -> DepthSweep:
    """Rounds over every depth, device and direction: one fio run each per round."""
    result = DepthSweep(mode)
    failed: set[tuple[str, str, int]] = set()
    for _ in range(rounds):
        for depth in levels:
            for device in devices:
                for rw in DIRECTIONS:
                    key = (device.driver, rw, depth)
                    if key in failed:
                        continue
                    workload = depth_workload(rw, depth, mode)
                    try:
                        got = runner(device, workload, seconds, meter)
                    except WorkloadError as error:
                        failed.add(key)
                        result.errors.append(f"{device.driver} {workload.label}: {error}")
                        continue
                    result.runs.setdefault(key, []).extend(got)
    for key in failed:  # a cell with a failed run has no honest samples
        result.runs.pop(key, None)
    return result


Judge = Callable[[Sequence[Measurement]], list[Finding]]


def judged_per_mode(measurements: Iterable[Measurement], judge: Judge) -> list[Finding]:
    """`judge` on each workqueue mode's measurements alone, its findings' details and extra
    naming the mode: kcryptd and inline runs of one driver are never paired."""
    words = {mode.label: mode.words for mode in MODES}
    by_mode: dict[str, list[Measurement]] = {}
    for m in measurements:
        by_mode.setdefault(str(m.extra.get("workqueue", "")), []).append(m)
    findings = []
    for label, members in by_mode.items():
        for finding in judge(members):
            extra = {**finding.extra, "workqueue": label}
            detail = f"{words.get(label, label)}, 4 KiB random I/O: {finding.detail}"
            findings.append(replace(finding, detail=detail, extra=extra))
    return findings
