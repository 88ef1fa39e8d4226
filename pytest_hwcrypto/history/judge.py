# SPDX-License-Identifier: MIT
"""Judging a history: every series of each board in kernel order, its change points, and
the changes of winner between series. One function for `hwcrypto history detect`, the
session's gate (--hwcrypto-history-gate) and `hwcrypto history show`, so the three never
disagree on what changed.

Pure apart from the detection library (history/changes.py).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from pytest_hwcrypto.history.changes import (
    MIN_RUNS,
    Change,
    SeriesChanges,
    driver_handovers,
    series_changes,
)
from pytest_hwcrypto.history.model import Point, Series, SeriesKey
from pytest_hwcrypto.history.order import order_points


@dataclass(frozen=True)
class Judged:
    """One series in kernel order with what detection says of it."""

    series: Series
    ordered: tuple[Point, ...]
    verdict: SeriesChanges


@dataclass(frozen=True)
class Judgement:
    """A history judged: per series, every change (handovers included), and the runs a
    --repo order left out."""

    judged: tuple[Judged, ...]
    changes: tuple[Change, ...]
    left_out: tuple[Point, ...]

    @property
    def verdicts(self) -> list[SeriesChanges]:
        return [j.verdict for j in self.judged]

    @property
    def failing_now(self) -> list[Change]:
        """Drops beyond max-drop that the newest kernel's runs made the detector name."""
        return [c for c in self.changes if c.failing and c.newest]


def series_sort_key(series: Series) -> tuple[str, ...]:
    key = series.key
    return (
        key.path,
        key.algorithm,
        key.driver or "",
        str(key.key_bits),
        str(key.block_size),
        key.op,
        str(key.concurrency),
    )


def judge_history(
    all_series: Sequence[Series], topo_order: Sequence[str] | None, max_drop: float
) -> Judgement:
    """Every series, board by board, in kernel order (``topo_order``: commits from git,
    else release versions), with its change points and the boards' driver handovers."""
    judged: list[Judged] = []
    handovers: list[Change] = []
    left_out: list[Point] = []
    for board in sorted({s.key.board for s in all_series}):
        ordered: dict[SeriesKey, Sequence[Point]] = {}
        mine = sorted((s for s in all_series if s.key.board == board), key=series_sort_key)
        for series in mine:
            placed = order_points(series.points, topo_order)
            left_out.extend(placed.left_out)
            ordered[series.key] = placed.points
            verdict = series_changes(series, placed.points, max_drop)
            judged.append(Judged(series, tuple(placed.points), verdict))
        handovers.extend(driver_handovers(ordered, max_drop))
    changes = [c for j in judged for c in j.verdict.changes] + handovers
    return Judgement(tuple(judged), tuple(changes), tuple(left_out))


def series_label(key: SeriesKey) -> str:
    """A series as one line's words: path, algorithm, driver, sizes, op, concurrency."""
    parts = [key.path, key.algorithm, key.driver or "(by name)"]
    if key.key_bits is not None:
        parts.append(f"{key.key_bits}-bit")
    if key.block_size is not None:
        parts.append(f"{key.block_size} B")
    parts.append(key.op)
    if key.concurrency is not None:
        parts.append(f"x{key.concurrency}")
    return " ".join(parts)


@dataclass(frozen=True)
class GateVerdict:
    """What --hwcrypto-history-gate says of the board's history: lines for the summary,
    and whether the session fails."""

    lines: tuple[str, ...]
    failed: bool


def gate_verdict(judgement: Judgement, board: str, max_drop: float) -> GateVerdict:
    """The gate: fail when the newest kernel is named as a change point with a drop
    beyond ``max_drop``; a history too short is one line, never a failure."""
    prefix = f"hwcrypto: history gate (board {board}, max-drop {max_drop:.0%})"
    failing = [c for c in judgement.failing_now if c.key.board == board]
    verdicts = [v for v in judgement.verdicts if v.key.board == board]
    if failing:
        lines = [f"{prefix}: FAILED, {len(failing)} series dropped with the newest kernel"]
        for change in sorted(failing, key=lambda c: c.change):
            lines.append(
                f"  {series_label(change.key)}: {change.change * 100:+.1f} % "
                f"[{change.low * 100:+.1f}, {change.high * 100:+.1f}], "
                f"{change.last_good.label()} (last good) -> {change.first_bad.label()} "
                f"(first bad)"
            )
        return GateVerdict(tuple(lines), True)
    judged = [v for v in verdicts if v.needs_more == 0]
    if not judged:
        more = min((v.needs_more for v in verdicts), default=MIN_RUNS)
        return GateVerdict(
            (
                f"{prefix}: history too short, needs {more} more run"
                f"{'s' if more != 1 else ''} of this board to judge",
            ),
            False,
        )
    return GateVerdict(
        (f"{prefix}: passed, {len(judged)} series judged, no new drop",),
        False,
    )
