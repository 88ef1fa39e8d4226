# SPDX-License-Identifier: MIT
"""Throughput against requests in flight, per driver (pure): what --hwcrypto-concurrency shows.

One table per measured path and block size that was measured at two or more levels N: a
row per driver with its throughput at each N, the gain from N = 1 to the highest N, and
CPU seconds per byte at the lowest and highest N. A queued engine's row rises to its
number of flows and then flattens, with little CPU; a CPU driver's stays where it was on
one core and its CPU per byte with it. The terminal summary and the HTML report both read
these tables, so they show the same numbers.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Optional

from pytest_hwcrypto.model.results import Measurement, Results
from pytest_hwcrypto.vocabulary import MIB

# source, algorithm, key_bits, op, block_size
ScalingKey = tuple[str, str, Optional[int], str, Optional[int]]


@dataclass(frozen=True)
class ScalingRow:
    driver: str
    mib_s: Mapping[int, float]  # level -> MiB/s (median)
    cpu_per_byte: Mapping[int, float]  # level -> CPU seconds per byte, where measured

    @property
    def gain(self) -> float | None:
        """Throughput at the highest level over N = 1 (None without both)."""
        levels = sorted(self.mib_s)
        if len(levels) < 2 or levels[0] != 1 or self.mib_s[1] <= 0:
            return None
        return self.mib_s[levels[-1]] / self.mib_s[1]


@dataclass(frozen=True)
class ScalingTable:
    key: ScalingKey
    levels: tuple[int, ...]
    rows: tuple[ScalingRow, ...]

    def title(self) -> str:
        source, algorithm, key_bits, op, size = self.key
        bits = f" {key_bits}-bit" if key_bits else ""
        return f"{source} {algorithm}{bits} {op} {size} B: MiB/s by requests in flight"

    def header(self) -> list[str]:
        return ["driver", *(f"N={level}" for level in self.levels), "gain", "CPU ms/MiB"]

    def cells(self, row: ScalingRow) -> list[str]:
        speeds = [f"{row.mib_s[level]:.3g}" if level in row.mib_s else "" for level in self.levels]
        gain = f"{row.gain:.2f}x" if row.gain is not None else ""
        return [row.driver, *speeds, gain, cpu_words(row, self.levels)]


def cpu_words(row: ScalingRow, levels: Sequence[int]) -> str:
    """'12.5 -> 3.1' milliseconds of CPU per MiB, at the lowest and the highest level."""
    known = [level for level in levels if level in row.cpu_per_byte]
    if not known:
        return ""
    first, last = known[0], known[-1]

    def ms_per_mib(level: int) -> str:
        return f"{row.cpu_per_byte[level] * MIB * 1000:.3g}"

    if first == last:
        return ms_per_mib(first)
    return f"{ms_per_mib(first)} -> {ms_per_mib(last)}"


def scaling_tables(results: Results) -> list[ScalingTable]:
    """Every path and block size measured at two or more levels, in a stable order."""
    groups: dict[ScalingKey, list[Measurement]] = {}
    for m in results.measurements:
        if m.driver is None:
            continue
        key = (m.source, m.algorithm, m.key_bits, m.op, m.block_size)
        groups.setdefault(key, []).append(m)
    tables = []
    for key in sorted(groups, key=_order):
        members = groups[key]
        levels = tuple(sorted({m.level for m in members}))
        if len(levels) < 2:
            continue
        by_driver: dict[str, dict[int, Measurement]] = {}
        for m in members:
            by_driver.setdefault(m.driver or "?", {})[m.level] = m
        rows = tuple(
            ScalingRow(
                driver,
                {level: m.bytes_per_second / MIB for level, m in at.items()},
                {level: m.cpu_per_byte for level, m in at.items() if m.cpu_per_byte is not None},
            )
            for driver, at in sorted(by_driver.items())
        )
        tables.append(ScalingTable(key, levels, rows))
    return tables


def _order(key: ScalingKey) -> tuple[str, str, int, str, int]:
    source, algorithm, key_bits, op, size = key
    return (source, algorithm, key_bits or 0, op, size or 0)
