# SPDX-License-Identifier: MIT
"""Reading /dev/hwrng: throughput per block size within a time budget, and the bytes read.

One source is current at a time (kernel/hwrng.py switches it); every block size gets an
equal share of the budget, read as several timed samples so a median can be taken. The
bytes of the largest block size are kept (up to `keep_bytes`) for the health checks, so
rngtest and the stuck/repeat checks judge the very output that was measured.
"""

from __future__ import annotations

import os
import statistics
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from pytest_hwcrypto.kernel.hwrng import DEV_HWRNG

SAMPLES_PER_SIZE = 5


@dataclass
class HwrngReading:
    """What reading one source gave: bytes/s samples per block size, and kept output."""

    samples: dict[int, list[float]] = field(default_factory=dict)
    # per block size: read calls, and those that returned fewer bytes than asked
    reads: dict[int, int] = field(default_factory=dict)
    short_reads: dict[int, int] = field(default_factory=dict)
    kept: bytearray = field(default_factory=bytearray)

    def median(self, block_size: int) -> float:
        return statistics.median(self.samples[block_size])


def read_source(
    block_sizes: Sequence[int],
    seconds: float,
    keep_bytes: int,
    least_kept: int,
    device: Path = DEV_HWRNG,
) -> HwrngReading:
    """Read `device` at each block size for about `seconds` in all; keep up to `keep_bytes`
    of the largest size's output, reading on until at least `least_kept` are kept."""
    reading = HwrngReading()
    largest = max(block_sizes)
    per_sample = seconds / (len(block_sizes) * SAMPLES_PER_SIZE)
    fd = os.open(device, os.O_RDONLY)
    try:
        for size in block_sizes:
            for _ in range(SAMPLES_PER_SIZE):
                got = 0
                start = time.perf_counter()
                elapsed = 0.0
                while elapsed < per_sample or got == 0:
                    chunk = os.read(fd, size)
                    reading.reads[size] = reading.reads.get(size, 0) + 1
                    if len(chunk) < size:
                        reading.short_reads[size] = reading.short_reads.get(size, 0) + 1
                    got += len(chunk)
                    if size == largest and len(reading.kept) < keep_bytes:
                        reading.kept += chunk[: keep_bytes - len(reading.kept)]
                    elapsed = time.perf_counter() - start
                reading.samples.setdefault(size, []).append(got / elapsed)
        # The health checks need their bytes even when the budget read fewer.
        while len(reading.kept) < least_kept:
            reading.kept += os.read(fd, min(largest, least_kept - len(reading.kept)))
    finally:
        os.close(fd)
    return reading
