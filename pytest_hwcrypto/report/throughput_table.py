# SPDX-License-Identifier: MIT
"""Throughput as tables: per algorithm path, one row per driver, MiB/s per block size (pure).

The terminal summary, the JUnit properties and the LAVA test cases all read a results
file through these tables, so they agree on which software driver a hardware driver is
compared with, on the ratio and on the crossover:

* a table is one comparable group -- source, algorithm, key size, operation, requests in
  flight -- as the rules group measurements (verdict/rules/series.py): a run measured at
  N = 1, 4, 16 gives three tables, side by side in the summary, which is the scaling;
* a hardware driver (cpu-accel, offload) is compared at each block size with the fastest
  `generic` driver of its table; an offload engine with no generic rival there, with the
  fastest `cpu-accel` one (the CPU's own instructions are software to an engine);
* the crossover is verdict.crossover's: the smallest size from which HW >= SW for good.

Point values (medians) only: the statistics behind every decision are in the findings and
verdicts, which the summary lists beside the tables.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from pytest_hwcrypto.model.results import Finding, Measurement, Results
from pytest_hwcrypto.units import size_label
from pytest_hwcrypto.verdict.crossover import crossover
from pytest_hwcrypto.vocabulary import (
    DEFAULT_MIN_RATIO,
    HARDWARE_CLASSES,
    MIB,
    DriverClass,
    FindingKind,
    RateUnit,
)

GroupKey = tuple[str, str, "int | None", str, int]  # source, algorithm, key_bits, op, level


@dataclass(frozen=True)
class Row:
    """One driver of a table."""

    driver: str
    driver_class: str | None
    winner: bool
    # block size (None: the tool gave none) -> MiB/s, or op/s in an op/s table (Table.unit)
    mib_s: Mapping[int | None, float]
    reference: str | None = None  # the software driver a hardware row is compared with
    ratios: Mapping[int, float] = field(default_factory=dict)  # block size -> HW/SW
    crossover: int | None = None
    slower_winner: bool = False  # a winner-not-fastest finding names it

    @property
    def is_hardware(self) -> bool:
        return self.driver_class in HARDWARE_CLASSES

    def verdict(self) -> str:
        """A few words for the row: how the kernel's choice and the hardware fare."""
        words = []
        if self.slower_winner:
            words.append("winner, not fastest")
        if self.ratios:
            if self.crossover is None:
                words.append(f"slower than {self.reference} at every size")
            elif self.crossover == min(self.ratios):
                words.append(f"faster than {self.reference} at every size")
            else:
                words.append(f"faster from {size_label(self.crossover)} B on")
        return "; ".join(words)


@dataclass(frozen=True)
class Table:
    source: str
    algorithm: str
    key_bits: int | None
    op: str
    block_sizes: tuple[int | None, ...]
    rows: tuple[Row, ...]
    concurrency: int = 1  # requests in flight while measured
    # What the rows' figures count: "B/s" (shown in MiB/s) or "op/s" (shown as they are).
    unit: str = RateUnit.BYTES_PER_SECOND

    @property
    def shown_unit(self) -> str:
        """The unit the rows' figures are in: MiB/s, or op/s."""
        return "op/s" if self.unit == RateUnit.OPERATIONS_PER_SECOND else "MiB/s"

    def title(self) -> str:
        key = f" {self.key_bits}-bit" if self.key_bits else ""
        depth = f" N={self.concurrency}" if self.concurrency != 1 else ""
        return f"{self.source} {self.algorithm}{key} {self.op}{depth}"

    def case_name(self) -> str:
        """`source.algorithm.key_bits.op` (the JUnit / LAVA prefix of this table's cases;
        `.n4` after it for a table measured with 4 requests in flight)."""
        key = f".{self.key_bits}" if self.key_bits else ""
        depth = f".n{self.concurrency}" if self.concurrency != 1 else ""
        return f"{self.source}.{self.algorithm}{key}.{self.op}{depth}"


def measurement_id(table: Table, driver: str, block_size: int | None) -> str:
    """`afalg.cbc(aes).128.encrypt.cbc(aes-generic).4096`: one measured cell, the same in
    every run that measures it (JUnit property names and LAVA test case names use it)."""
    return f"{table.case_name()}.{driver}.{block_size if block_size is not None else 'all'}"


def throughput_tables(results: Results, min_ratio: float = DEFAULT_MIN_RATIO) -> list[Table]:
    """Every group of the results' measurements as a table, in a stable order (by source,
    algorithm, key size, operation): the same results merged from xdist workers in
    another order give the same tables."""
    classes = {
        str(entry.get("driver")): str(entry.get("class"))
        for entry in results.inventory
        if entry.get("driver") and entry.get("class")
    }
    winners = {
        (str(entry.get("name")), str(entry.get("driver")))
        for entry in results.inventory
        if entry.get("winner") is True
    }
    slower_winners = _slower_winners(results.findings)
    # A template instance bound by driver name after the inventory was read is known as
    # the winner only from the finding that names it.
    winners |= {(key[1], key[4]) for key in slower_winners}
    groups: dict[GroupKey, list[Measurement]] = {}
    for measurement in results.measurements:
        key = (
            measurement.source,
            measurement.algorithm,
            measurement.key_bits,
            measurement.op,
            measurement.level,
        )
        groups.setdefault(key, []).append(measurement)
    return [
        _table(key, members, classes, winners, slower_winners, min_ratio)
        for key, members in sorted(groups.items(), key=lambda item: _group_order(item[0]))
    ]


def _table(
    key: GroupKey,
    members: Sequence[Measurement],
    classes: Mapping[str, str],
    winners: set[tuple[str, str]],
    slower_winners: set[tuple[str, str, int | None, str, str]],
    min_ratio: float,
) -> Table:
    source, algorithm, key_bits, op, level = key
    by_driver: dict[str, dict[int | None, float]] = {}
    driver_class: dict[str, str | None] = {}
    unit = members[0].unit or RateUnit.BYTES_PER_SECOND
    scale = 1.0 if unit == RateUnit.OPERATIONS_PER_SECOND else MIB
    for measurement in members:
        driver = measurement.driver or "?"
        by_driver.setdefault(driver, {})[measurement.block_size] = (
            measurement.bytes_per_second / scale
        )
        driver_class.setdefault(
            driver, measurement.driver_class or classes.get(measurement.driver or "")
        )
    rows = [
        Row(
            driver=driver,
            driver_class=driver_class[driver],
            winner=(algorithm, driver) in winners,
            mib_s=speeds,
            slower_winner=level == 1
            and (source, algorithm, key_bits, op, driver) in slower_winners,
        )
        for driver, speeds in by_driver.items()
    ]
    rows = sorted((_with_ratios(row, rows, min_ratio) for row in rows), key=_row_order)
    sizes = sorted({size for row in rows for size in row.mib_s}, key=_size_order)
    return Table(source, algorithm, key_bits, op, tuple(sizes), tuple(rows), level, unit)


def _with_ratios(row: Row, rows: Sequence[Row], min_ratio: float) -> Row:
    if not row.is_hardware:
        return row
    reference = _software_reference(row, rows)
    if reference is None:
        return row
    ratios = {
        size: speed / reference.mib_s[size]
        for size, speed in row.mib_s.items()
        if size is not None and reference.mib_s.get(size)
    }
    if not ratios:
        return row
    return Row(
        driver=row.driver,
        driver_class=row.driver_class,
        winner=row.winner,
        mib_s=row.mib_s,
        reference=reference.driver,
        ratios=ratios,
        crossover=crossover(ratios, min_ratio),
        slower_winner=row.slower_winner,
    )


def _software_reference(row: Row, rows: Sequence[Row]) -> Row | None:
    """The fastest generic driver (summed over sizes); for an offload engine without one,
    the fastest cpu-accel driver."""
    wanted = [DriverClass.GENERIC]
    if row.driver_class == DriverClass.OFFLOAD:
        wanted.append(DriverClass.CPU_ACCEL)
    for driver_class in wanted:
        candidates = [other for other in rows if other.driver_class == driver_class]
        if candidates:
            return max(candidates, key=lambda other: sum(other.mib_s.values()))
    return None


def _slower_winners(findings: Sequence[Finding]) -> set[tuple[str, str, int | None, str, str]]:
    found = set()
    for finding in findings:
        if finding.kind != FindingKind.WINNER_NOT_FASTEST:
            continue
        extra = finding.extra
        found.add(
            (
                str(extra.get("source")),
                finding.algorithm,
                extra.get("key_bits"),
                str(extra.get("op")),
                str(extra.get("winner")),
            )
        )
    return found


def _group_order(key: GroupKey) -> tuple[str, str, int, str, int]:
    source, algorithm, key_bits, op, level = key
    return (source, algorithm, key_bits or 0, op, level)


# Hardware first (what the table is about), then software, each by name.
_CLASS_ORDER = {DriverClass.OFFLOAD: 0, DriverClass.CPU_ACCEL: 1, DriverClass.GENERIC: 2}


def _row_order(row: Row) -> tuple[int, str]:
    rank = next((r for c, r in _CLASS_ORDER.items() if c == row.driver_class), len(_CLASS_ORDER))
    return (rank, row.driver)


def _size_order(size: int | None) -> int:
    return -1 if size is None else size
